public import Foundation

/// What a finished child process left: its exit status (128 + signal when killed) and output.
public struct ProcessResult: Sendable {
    /// Exit status; 128 + the signal number when a signal ended it.
    public var status: Int32
    /// Everything it wrote to standard output.
    public var output: String
    /// Everything it wrote to standard error.
    public var errors: String
}

/// Runs helper programs for tests (the emulator, cc-tool, make, s51).
public enum ChildProcess {
    /// Runs `executable` with `arguments` in `directory` and waits for it. Output goes to
    /// temporary files rather than pipes, so a child that writes a lot to both streams cannot
    /// block. With `timeout`, a child still running after that many seconds is killed (status
    /// 128 + SIGKILL), so a hung helper fails its test instead of hanging the suite.
    public static func run(
        _ executable: String, _ arguments: [String], in directory: URL,
        standardInput: String = "/dev/null", environment: [String: String]? = nil, timeout: Double? = nil
    ) throws -> ProcessResult {
        let scratch = try TemporaryFolder(prefix: "child")
        defer { scratch.remove() }
        let outputURL = scratch.url.appendingPathComponent("stdout")
        let errorsURL = scratch.url.appendingPathComponent("stderr")
        try Data().write(to: outputURL)
        try Data().write(to: errorsURL)
        let output = try FileHandle(forWritingTo: outputURL)
        let errors = try FileHandle(forWritingTo: errorsURL)
        let input = try FileHandle(forReadingFrom: URL(fileURLWithPath: standardInput))
        defer {
            try? output.close()
            try? errors.close()
            try? input.close()
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.currentDirectoryURL = directory
        if let environment {
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { _, new in new }
        }
        process.standardInput = input
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        let status = process.exitStatus(timeout: timeout)
        return ProcessResult(
            status: status, output: String(decoding: try Data(contentsOf: outputURL), as: UTF8.self),
            errors: String(decoding: try Data(contentsOf: errorsURL), as: UTF8.self))
    }
}

extension Process {
    /// Waits for the process and returns its exit status (128 + signal when killed); with
    /// `timeout`, kills it once that many seconds have passed.
    ///
    /// `waitUntilExit` alone sometimes never returned here when several tests start processes at
    /// once and a child dies within milliseconds (Foundation misses its SIGCHLD; the child stays a
    /// zombie). So this also asks the kernel directly.
    public func exitStatus(timeout: Double? = nil) -> Int32 {
        let pid = processIdentifier
        let deadline = timeout.map { Date().addingTimeInterval($0) }
        while isRunning {
            var status: Int32 = 0
            if waitpid(pid, &status, WNOHANG) == pid {
                return status & 0x7F == 0 ? (status >> 8) & 0xFF : 128 + (status & 0x7F)
            }
            if let deadline, Date() > deadline { kill(pid, SIGKILL) }
            usleep(5_000)
        }
        return terminationReason == .uncaughtSignal ? 128 + terminationStatus : terminationStatus
    }
}
