import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// The command's process ID, for the stop signals' handler (a C function reaches only globals).
let commandProcess = Atomic<Int32>(0)

/// Makes a stop signal (SIGINT, SIGTERM, SIGHUP) leave the emulator running until its command
/// ends: the emulated debuggers must outlive the command, whose every USB call would otherwise fail
/// and whose umockdev preload aborts it (a `timeout` that ended a waiting bench crashed ccbeacon).
/// A signal the command got too — from the terminal, or sent to the process group the two share
/// (what `timeout` and a shell's job control do) — is not passed on, so that one Ctrl-C stays one;
/// a signal sent to the emulator alone, from outside its group, is passed to the command. Known
/// limit: a process of the emulator's own group that signals the emulator alone is not passed on.
func passStopSignalsToCommand() {
    for number in [SIGINT, SIGTERM, SIGHUP] {
        var current = sigaction()
        sigaction(number, nil, &current)
        if unsafeBitCast(current.__sigaction_handler.sa_handler, to: Int.self) == 1 { continue }  // SIG_IGN stays
        var action = sigaction()
        action.sa_flags = SA_SIGINFO | SA_RESTART
        sigemptyset(&action.sa_mask)
        action.__sigaction_handler.sa_sigaction = { number, info, _ in
            let command = commandProcess.load(ordering: .relaxed)
            guard command > 0, let info else { return }
            let sender = info.pointee._sifields._kill.si_pid
            let fromProcess = info.pointee.si_code == SI_USER || info.pointee.si_code == SI_QUEUE
            if fromProcess, sender > 0, getpgid(sender) != getpgrp() { kill(command, number) }
        }
        sigaction(number, &action, nil)
    }
}
