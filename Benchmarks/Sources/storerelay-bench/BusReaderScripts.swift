/// The Python programs the bus benchmark runs for `amqp` and `sqs`, on the clients a team
/// would use (pika, boto3), started by the harness with their standard output on a pipe to its
/// loop (`LineReceiptReader`). Each prints `ready` once its queue exists. The AMQP consumer
/// then prints `<event id> <time.monotonic_ns()>` for every message it takes, the time read
/// when the message reached the consumer (CLOCK_MONOTONIC, the harness's clock), written and
/// flushed once per batch the client hands over (a write per batch, not per message). The SQS
/// watcher prints the queue's own count instead (`count <n> <ns>`).
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

    /// Creates a standard queue and, with no consumer, prints `count <messages> <ns>` every
    /// 200 ms (GetQueueAttributes: ApproximateNumberOfMessages + ...NotVisible, exact on moto).
    /// moto's receive path is too slow to read events back one by one (see `startSQS`), so the
    /// SQS row is count-based: deliveries per second from the queue's own count over time.
    /// Arguments: endpoint, region, access key id, secret, queue name.
    static let sqsCount = #"""
        import sys, time, boto3
        endpoint, region, key_id, secret, name = sys.argv[1:6]
        sqs = boto3.client('sqs', endpoint_url=endpoint, region_name=region,
                           aws_access_key_id=key_id, aws_secret_access_key=secret)
        url = sqs.create_queue(QueueName=name)['QueueUrl']
        sys.stdout.write('ready\n')
        sys.stdout.flush()
        while True:
            attributes = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=[
                'ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible'])['Attributes']
            held = int(attributes['ApproximateNumberOfMessages']) + int(attributes['ApproximateNumberOfMessagesNotVisible'])
            sys.stdout.write(f'count {held} {time.monotonic_ns()}\n')
            sys.stdout.flush()
            time.sleep(0.2)
        """#

    /// Prints how many messages `queue` holds ready for a consumer (the broker's own count).
    /// Arguments: URL, queue.
    static let amqpDepth = #"""
        import sys, pika
        connection = pika.BlockingConnection(pika.URLParameters(sys.argv[1]))
        print(connection.channel().queue_declare(sys.argv[2], durable=True, passive=True).method.message_count)
        connection.close()
        """#

}
