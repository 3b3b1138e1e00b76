// swift-tools-version: 6.0
// An outside package using ccbeacon's library products: it makes a station image from the
// bundled template, checks its payload, and flashes it through the in-process emulator.
import PackageDescription

let package = Package(
    name: "StationImage",
    // Named, so that the products below find it whatever the checkout's folder is called.
    dependencies: [.package(name: "ccbeacon", path: "../..")],
    targets: [
        .executableTarget(
            name: "station-image",
            dependencies: ["BeaconPayload", "TargetData", "FirmwareTemplate", "CCDebugger", "CCDebuggerEmulator"].map {
                .product(name: $0, package: "ccbeacon")
            })
    ]
)
