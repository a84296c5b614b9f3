import BenchKit
#if canImport(Glibc)
import Glibc
#endif

/// nginx answering `return 200` to the same POSTs: what a mature event-driven C server does
/// with the same requests on the same machine, without verifying or storing anything.
final class NginxBaseline {
    let process: ChildProcess
    let port: UInt16

    /// Nil (with the reason printed) when nginx is not installed.
    static func start(directory: String) throws -> NginxBaseline? {
        guard let nginx = Files.which("nginx") else {
            Report.line("nginx not installed: baseline skipped (apt-get install -y nginx to include it)")
            return nil
        }
        return try NginxBaseline(nginx: nginx, directory: directory)
    }

    private init(nginx: String, directory: String) throws {
        try Files.recreateDirectory(directory)
        port = try Socket.freePort()
        // One worker per core, like the gateway's use of both cores; the body is read and
        // discarded (client_body_buffer_size keeps 20 KB bodies in memory, not temp files).
        let config = """
            daemon off;
            master_process on;
            worker_processes 2;
            pid \(directory)/nginx.pid;
            error_log \(directory)/error.log warn;
            events { worker_connections 1024; use epoll; }
            http {
                access_log off;
                client_body_temp_path \(directory)/body;
                proxy_temp_path \(directory)/proxy;
                fastcgi_temp_path \(directory)/fastcgi;
                uwsgi_temp_path \(directory)/uwsgi;
                scgi_temp_path \(directory)/scgi;
                client_body_buffer_size 64k;
                client_max_body_size 1m;
                keepalive_requests 1000000;
                server {
                    listen 127.0.0.1:\(port);
                    location / {
                        default_type application/json;
                        return 200 '{"status":"accepted","id":"nginx"}';
                    }
                }
            }
            """
        try Files.write(directory + "/nginx.conf", config)
        process = try ChildProcess([nginx, "-c", directory + "/nginx.conf", "-p", directory], stderr: directory + "/stderr.log")
        try BlockingHTTP.waitFor(port: port, path: "/", process: process)
    }

    /// CPU of the master and its workers (the workers do the work).
    var observed: Observed {
        let pid = process.pid
        return Observed(
            cpuNanoseconds: { ProcessStats.children(of: pid).reduce(ProcessStats.cpuNanoseconds(pid: pid)) { $0 + ProcessStats.cpuNanoseconds(pid: $1) } },
            rss: { ProcessStats.children(of: pid).reduce(ProcessStats.memory(pid: pid).rss) { $0 + ProcessStats.memory(pid: $1).rss } })
    }

    func stop() { process.stop(signal: SIGQUIT) }
}
