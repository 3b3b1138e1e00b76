// swift-tools-version:6.0
import PackageDescription

// Module layout and one-way imports follow ../shared/docs/design.md:
// IntelHex and BeaconPayload are pure (Foundation only); the CLI sits on top.
let strictSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("InternalImportsByDefault"),
]

let package = Package(
    name: "ccbeacon",
    products: [
        .executable(name: "ccbeacon", targets: ["ccbeacon"]),
        .library(name: "IntelHex", targets: ["IntelHex"]),
        .library(name: "BeaconPayload", targets: ["BeaconPayload"]),
        .library(name: "TargetData", targets: ["TargetData"]),
        .library(name: "FirmwareTemplate", targets: ["FirmwareTemplate"]),
        .library(name: "CCDebugger", targets: ["CCDebugger"]),
        .library(name: "CCDebuggerUSB", targets: ["CCDebuggerUSB"]),
        .library(name: "CCDebuggerEmulator", targets: ["CCDebuggerEmulator"]),
        .library(name: "BeaconScan", targets: ["BeaconScan"]),
    ],
    targets: [
        .target(name: "HexText", swiftSettings: strictSettings),
        .target(name: "IntelHex", dependencies: ["HexText"], swiftSettings: strictSettings),
        .target(name: "BeaconPayload", dependencies: ["HexText", "StructuredText"], swiftSettings: strictSettings),
        .target(name: "StructuredText", swiftSettings: strictSettings),
        // <sys/xattr.h> for Storage (the Glibc module does not export it).
        .target(name: "CFileAttributes"),
        // The C library's wcwidth in a UTF-8 locale, for the column widths of text.
        .target(name: "CTextWidth"),
        .target(name: "Storage", dependencies: ["CFileAttributes"], swiftSettings: strictSettings),
        // Leaf data: checksums, and the chip and board facts every layer reads.
        // SHA-256 with the x86 SHA extensions when the processor has them (C: intrinsics).
        .target(name: "CSHA256"),
        .target(name: "Checksums", dependencies: ["CSHA256"], swiftSettings: strictSettings),
        .target(name: "TargetData", dependencies: ["StructuredText", "HexText"], swiftSettings: strictSettings),
        // What is on air: btsnoop captures and the advertising reports in them.
        .target(name: "BeaconScan", dependencies: ["BeaconPayload", "HexText"], swiftSettings: strictSettings),
        // A live controller through BlueZ's raw HCI socket (Linux), behind BeaconScan's HCITransport.
        .target(name: "HCISocket", dependencies: ["BeaconScan"], swiftSettings: strictSettings),
        .target(
            name: "FirmwareTemplate",
            dependencies: [
                "IntelHex", "BeaconPayload", "StructuredText", "TargetData", "Checksums", "HexText",
            ],
            swiftSettings: strictSettings
        ),
        // Templates as folders on disk (Linux file access), apart from the portable FirmwareTemplate.
        .target(
            name: "TemplateFiles", dependencies: ["FirmwareTemplate", "Storage", "TargetData"],
            swiftSettings: strictSettings),
        .target(
            name: "CCDebugger", dependencies: ["IntelHex", "TargetData", "Checksums", "HexText", "StructuredText"],
            swiftSettings: strictSettings),
        .target(
            name: "CCDebuggerEmulator", dependencies: ["CCDebugger", "TargetData"], swiftSettings: strictSettings),
        .systemLibrary(name: "CLibUSB", pkgConfig: "libusb-1.0", providers: [.apt(["libusb-1.0-0-dev"])]),
        .target(
            name: "CCDebuggerUSB", dependencies: ["CCDebugger", "CLibUSB", "TargetData"],
            swiftSettings: strictSettings),
        .systemLibrary(name: "CUMockdev", pkgConfig: "umockdev-1.0", providers: [.apt(["libumockdev-dev"])]),
        .target(name: "CUSBEmulation", dependencies: ["CUMockdev"]),
        .systemLibrary(name: "CSQLite", providers: [.apt(["libsqlite3-dev"])]),
        .systemLibrary(name: "CLibPQ", pkgConfig: "libpq", providers: [.apt(["libpq-dev"])]),
        // Station labels: the QR string, QR codes through libqrencode, and the SVG sheets we write.
        .systemLibrary(name: "CQREncode", pkgConfig: "libqrencode", providers: [.apt(["libqrencode-dev"])]),
        .target(
            name: "BeaconLabels",
            dependencies: ["CQREncode", "CTextWidth", "BeaconPayload", "HexText", "StructuredText"],
            swiftSettings: strictSettings),
        // The ledger's contract written once (schema, statements, runs and leases, checks, history)
        // over two thin drivers: SQLite here, PostgreSQL in PostgresLedger. Nothing above it: no flasher, no templates.
        .target(
            name: "StationLedger",
            dependencies: ["BeaconPayload", "StructuredText", "Storage", "CSQLite", "HexText"],
            swiftSettings: strictSettings
        ),
        // Station lists, the address plan, the power edit and batch: what a list says and the
        // images it makes, no debugger.
        .target(
            name: "Stations",
            dependencies: [
                "FirmwareTemplate", "BeaconPayload", "IntelHex", "StructuredText", "Storage", "Checksums", "HexText",
                "StationLedger",
            ],
            swiftSettings: strictSettings
        ),
        // The provisioning run: debuggers, the ledger, resume, on-air checks.
        .target(
            name: "Provisioning",
            dependencies: [
                "Stations", "FirmwareTemplate", "BeaconPayload", "IntelHex", "Storage", "CCDebugger",
                "Checksums", "HexText", "StationLedger",
            ],
            swiftSettings: strictSettings
        ),
        // The shared ledger on a PostgreSQL server (libpq): StationLedger's core over a libpq driver.
        .target(
            name: "PostgresLedger", dependencies: ["StationLedger", "CLibPQ", "BeaconPayload"],
            swiftSettings: strictSettings),
        // The command line of any tool: option tables, parser, console, man pages and completions.
        .target(name: "CommandLineKit", dependencies: ["StructuredText"], swiftSettings: strictSettings),
        .target(
            name: "CCBeaconCLI",
            dependencies: [
                "CommandLineKit", "IntelHex", "BeaconPayload", "StructuredText", "Storage", "FirmwareTemplate",
                "TemplateFiles",
                "Provisioning",
                "Stations",
                "CCDebugger", "TargetData", "HexText", "BeaconScan", "PostgresLedger", "BeaconLabels",
                "StationLedger",
            ],
            swiftSettings: strictSettings,
            plugins: ["VersionFile"]
        ),
        // The version, written once in VERSION, compiled into CCBeaconCLI.
        .plugin(name: "VersionFile", capability: .buildTool()),
        .executableTarget(
            name: "ccbeacon",
            dependencies: ["CCBeaconCLI", "CommandLineKit", "CCDebuggerUSB", "HCISocket"],
            swiftSettings: strictSettings
        ),
        .executableTarget(
            name: "cc-debugger-emulator",
            dependencies: ["CCDebugger", "CCDebuggerEmulator", "CUSBEmulation", "IntelHex", "Storage", "TargetData"],
            swiftSettings: strictSettings
        ),
        .executableTarget(
            name: "ccbeacon-bench",
            dependencies: [
                "IntelHex", "CCDebugger", "CCDebuggerEmulator", "FirmwareTemplate", "TemplateFiles", "Provisioning",
                "BeaconPayload", "TargetData", "PostgresLedger", "StationLedger",
            ],
            swiftSettings: strictSettings
        ),
        .target(
            name: "TestSupport",
            dependencies: ["IntelHex", "FirmwareTemplate", "TemplateFiles", "Storage", "TargetData", "BeaconScan"],
            path: "Tests/TestSupport",
            swiftSettings: strictSettings),
        .testTarget(name: "IntelHexTests", dependencies: ["TestSupport", "IntelHex"], swiftSettings: strictSettings),
        .testTarget(
            name: "BeaconScanTests", dependencies: ["BeaconScan", "BeaconPayload", "TestSupport", "HCISocket"],
            swiftSettings: strictSettings),
        .testTarget(
            name: "BeaconPayloadTests",
            dependencies: ["BeaconPayload"],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "BeaconLabelsTests", dependencies: ["BeaconLabels", "BeaconPayload"],
            swiftSettings: strictSettings),
        .testTarget(
            name: "StructuredTextTests",
            dependencies: ["StructuredText", "HexText"],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "FirmwareTemplateTests",
            dependencies: [
                "TestSupport", "FirmwareTemplate", "TemplateFiles", "IntelHex", "BeaconPayload", "StructuredText",
                "Storage", "TargetData", "Checksums",
            ],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "CCDebuggerTests",
            dependencies: [
                "CCDebugger", "CCDebuggerEmulator", "TestSupport", "IntelHex", "FirmwareTemplate", "TargetData",
            ],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "USBEmulationTests", dependencies: ["TestSupport", "IntelHex", "Storage"],
            swiftSettings: strictSettings),
        .testTarget(
            name: "FirmwareSimulationTests",
            dependencies: [
                "TestSupport", "CCBeaconCLI", "CommandLineKit", "FirmwareTemplate", "BeaconPayload", "IntelHex",
                "Checksums",
            ],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "ProvisioningTests",
            dependencies: [
                "Provisioning", "Stations", "FirmwareTemplate", "BeaconPayload", "StructuredText", "IntelHex",
                "Storage",
                "TestSupport", "CCDebugger", "CCDebuggerEmulator", "Checksums", "PostgresLedger", "StationLedger",
            ],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "CCBeaconCLITests",
            dependencies: [
                "CCDebuggerEmulator", "CCDebugger", "CCBeaconCLI", "CommandLineKit", "BeaconLabels", "IntelHex",
                "BeaconPayload",
                "FirmwareTemplate",
                "TestSupport", "StructuredText", "Storage", "Provisioning", "Stations", "Checksums", "BeaconScan",
                "HexText",
                "CFileAttributes", "PostgresLedger", "StationLedger",
            ],
            exclude: ["Fixtures"],
            swiftSettings: strictSettings
        ),
    ],
    swiftLanguageModes: [.v6]
)
