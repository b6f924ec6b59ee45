import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
#if canImport(Glibc)
import Glibc
#endif

/// A server the loopback clients ask.
protocol LoopbackServer: Sendable {
    var baseURL: URL { get }
    /// The TCP connections the server has accepted so far.
    func connections() async throws -> Int
    func stop()
}

extension ServerProcess: LoopbackServer {}

/// nginx (Debian's `nginx` package) in one process of its own on 127.0.0.1, answering the
/// loopback scenario's two requests from memory: a user's friends as a static file, and a new
/// post as a fixed answer. One worker, no logs: a server that is not the bottleneck, so that
/// the client's own cost shows (the SocialServer encodes JSON per answer and shares the two
/// cores with the client).
final class NginxProcess: LoopbackServer, @unchecked Sendable {
    // Safety: set once in init, then only read; the process object is thread-safe to terminate.
    let baseURL: URL
    private let process: Process
    private let directory: URL

    /// Where `PUT /uploads/…` stores bodies, and what `GET /uploads/…` serves.
    var uploadsFolder: URL { directory.appendingPathComponent("uploads") }

    /// What `/users/1/friends` answers: the SocialServer's friends of user 1, as it sends them.
    static let friends = #"[{"id":2,"name":"Grace","email":"grace@example.com"},{"id":3,"name":"Alan","email":"alan@example.com"},{"id":5,"name":"Barbara","email":"barbara@example.com"},{"id":6,"name":"Edsger","email":"edsger@example.com"},{"id":8,"name":"Margaret","email":"margaret@example.com"},{"id":9,"name":"Dennis","email":"dennis@example.com"}]"#
    /// What `POST /posts` answers.
    static let post = #"{"id":1,"authorID":1,"text":"a post"}"#

    static func start() throws -> NginxProcess {
        let executable = ["/usr/sbin/nginx", "/usr/bin/nginx"].first { FileManager.default.isExecutableFile(atPath: $0) }
        guard let executable else { throw BenchmarkFailure("nginx is not installed: apt-get install nginx") }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("nginx-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try Data(friends.utf8).write(to: directory.appendingPathComponent("friends.json"))
        // Writable by nginx's workers, which run as another user when it is started as root.
        try FileManager.default.createDirectory(at: directory.appendingPathComponent("uploads"), withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o777])
        let port = try freePort()
        try configuration(port: port, directory: directory.path).write(to: directory.appendingPathComponent("nginx.conf"), atomically: true, encoding: .utf8)

        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = ["-p", directory.path, "-c", directory.appendingPathComponent("nginx.conf").path, "-e", "stderr"]
        process.standardError = FileHandle.nullDevice
        try process.run()
        let server = NginxProcess(baseURL: URL(string: "http://127.0.0.1:\(port)")!, process: process, directory: directory)
        // It listens within milliseconds; ask until it answers, for at most 5 s.
        for _ in 0..<100 {
            if (try? Data(contentsOf: server.baseURL.appendingPathComponent("_stats/connections"))) != nil { return server }
            guard process.isRunning else { break }
            usleep(50_000)
        }
        server.stop()
        throw BenchmarkFailure("nginx did not answer on port \(port)")
    }

    private init(baseURL: URL, process: Process, directory: URL) {
        self.baseURL = baseURL
        self.process = process
        self.directory = directory
    }

    /// One worker, one keep-alive connection per client connection for as long
    /// as the run lasts, and the counts of `stub_status` for the connections. `PUT /uploads/…`
    /// stores a body of any size (WebDAV), and answers only once it has read it all.
    private static func configuration(port: Int, directory: String) -> String {
        """
        daemon off;
        worker_processes 1;
        pid \(directory)/nginx.pid;
        error_log stderr error;
        events { worker_connections 1024; }
        http {
            access_log off;
            client_body_temp_path \(directory)/body;
            proxy_temp_path \(directory)/proxy;
            fastcgi_temp_path \(directory)/fastcgi;
            uwsgi_temp_path \(directory)/uwsgi;
            scgi_temp_path \(directory)/scgi;
            keepalive_requests 1000000;
            keepalive_timeout 300s;
            server {
                listen 127.0.0.1:\(port);
                location = /users/1/friends { default_type application/json; alias \(directory)/friends.json; }
                location = /posts { default_type application/json; return 201 '\(post)'; }
                location = /_stats/connections { stub_status; }
                location /uploads/ { client_max_body_size 0; dav_methods PUT; root \(directory); }
            }
        }
        """
    }

    /// The connections nginx accepted so far: `stub_status`'s first count, less the one
    /// this question itself may have opened.
    func connections() async throws -> Int {
        let (data, _) = try await URLSession.shared.data(from: baseURL.appendingPathComponent("_stats/connections"))
        // "Active connections: 1 \nserver accepts handled requests\n 16 16 31 \n…"
        let lines = String(decoding: data, as: UTF8.self).split(separator: "\n")
        guard lines.count > 2, let accepts = lines[2].split(separator: " ").first.flatMap({ Int($0) }) else {
            throw BenchmarkFailure("nginx's stub_status said: \(String(decoding: data, as: UTF8.self))")
        }
        return accepts
    }

    func stop() {
        process.terminate()
        process.waitUntilExit()
        try? FileManager.default.removeItem(at: directory)
    }

    /// A port of 127.0.0.1 that was free a moment ago: the kernel's pick for port 0.
    private static func freePort() throws -> Int {
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socket >= 0 else { throw BenchmarkFailure("socket: \(errno)") }
        defer { close(socket) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(socket, $0, length) == 0 && getsockname(socket, $0, &length) == 0
            }
        }
        guard bound else { throw BenchmarkFailure("bind: \(errno)") }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}
