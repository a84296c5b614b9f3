/// The consumers the bus benchmark runs for `amqp` and `sqs`: small Python programs on the
/// clients a team would use (pika, boto3), started by the harness with their standard output
/// on a pipe to its loop (`LineReceiptReader`). Each prints `ready` once its queue exists and
/// it is consuming, then `<event id> <time.monotonic_ns()>` for every message it takes, the
/// time read when the message reached the consumer (CLOCK_MONOTONIC, the harness's clock).
/// Lines are written and flushed once per batch the client hands over, so the pipe costs a
/// write per batch, not per message.
enum BusReaderScripts {
    /// Declares a durable topic exchange and a durable classic queue bound to it (what the
    /// README's example and the project's tests use), then consumes with manual
    /// acknowledgements, one `multiple` ack per batch, a prefetch of 1,000. A consumer that
    /// acknowledges is what lets RabbitMQ forget a message, as a real one would.
    /// Arguments: URL, exchange, queue, binding key.
    static let amqp = #"""
        import sys, time, pika
        url, exchange, queue, key = sys.argv[1:5]
        parameters = pika.URLParameters(url)
        parameters.connection_attempts = 30   # the listener may open before the node is fully up
        parameters.retry_delay = 1
        connection = pika.BlockingConnection(parameters)
        channel = connection.channel()
        channel.exchange_declare(exchange, 'topic', durable=True)
        channel.queue_declare(queue, durable=True)
        channel.queue_bind(queue, exchange, key)
        channel.basic_qos(prefetch_count=1000)
        lines = []
        last_tag = 0
        def on_message(channel, method, properties, body):
            global last_tag
            lines.append(f'{properties.message_id} {time.monotonic_ns()}\n')
            last_tag = method.delivery_tag
        channel.basic_consume(queue, on_message)
        sys.stdout.write('ready\n')
        sys.stdout.flush()
        while True:
            # Returns once a batch of frames has been dispatched to on_message.
            connection.process_data_events(time_limit=None)
            if lines:
                sys.stdout.write(''.join(lines))
                sys.stdout.flush()
                lines.clear()
                channel.basic_ack(last_tag, multiple=True)
        """#

    /// Creates a standard queue, then long-polls it (ReceiveMessage, up to 10 messages, 1 s
    /// wait) and deletes what it received (DeleteMessageBatch), as an SQS consumer does.
    /// Deleting also keeps moto fast: it scans every message it holds on each receive.
    /// Arguments: endpoint, region, access key id, secret, queue name.
    static let sqs = #"""
        import sys, time, boto3
        endpoint, region, key_id, secret, name = sys.argv[1:6]
        sqs = boto3.client('sqs', endpoint_url=endpoint, region_name=region,
                           aws_access_key_id=key_id, aws_secret_access_key=secret)
        url = sqs.create_queue(QueueName=name)['QueueUrl']
        sys.stdout.write('ready\n')
        sys.stdout.flush()
        while True:
            answer = sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10, WaitTimeSeconds=1,
                                         MessageAttributeNames=['id'])
            messages = answer.get('Messages', [])
            if not messages:
                continue
            now = time.monotonic_ns()
            sys.stdout.write(''.join(f"{m['MessageAttributes']['id']['StringValue']} {now}\n" for m in messages))
            sys.stdout.flush()
            sqs.delete_message_batch(QueueUrl=url, Entries=[
                {'Id': str(index), 'ReceiptHandle': m['ReceiptHandle']} for index, m in enumerate(messages)])
        """#

    /// Prints how many messages `queue` holds ready for a consumer (the broker's own count).
    /// Arguments: URL, queue.
    static let amqpDepth = #"""
        import sys, pika
        connection = pika.BlockingConnection(pika.URLParameters(sys.argv[1]))
        print(connection.channel().queue_declare(sys.argv[2], durable=True, passive=True).method.message_count)
        connection.close()
        """#

    /// Prints the queue's ApproximateNumberOfMessages and ...NotVisible (received, not deleted).
    /// Arguments: endpoint, region, access key id, secret, queue name.
    static let sqsDepth = #"""
        import sys, boto3
        endpoint, region, key_id, secret, name = sys.argv[1:6]
        sqs = boto3.client('sqs', endpoint_url=endpoint, region_name=region,
                           aws_access_key_id=key_id, aws_secret_access_key=secret)
        url = sqs.get_queue_url(QueueName=name)['QueueUrl']
        attributes = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=[
            'ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible'])['Attributes']
        print(attributes['ApproximateNumberOfMessages'], attributes['ApproximateNumberOfMessagesNotVisible'])
        """#
}
