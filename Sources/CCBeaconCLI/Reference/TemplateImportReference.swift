import CommandLineKit

extension TemplateImportCommand {
    /// The man page's examples and reference beyond the help (every console example runs in the tests).
    static let manual = ManualPage(
        examples: #"""
            ```console
            $ ccbeacon template import SimpleBLEPeripheral_ibeacon.hex --name lab13 -o my-templates/lab13
            template 'lab13' written to my-templates/lab13/
              payload: iBeacon E2C56DB5-DFFB-48D2-B060-D0F5A71096E0 major 1 minor 2 power -51 dBm (flags 0x06) at 0x32A
            ```
            """#,
        sections: [
            ManualSection(
                "Import",
                #"""
                `template import` searches the image's memory for the iBeacon block and needs exactly one outside
                the NV and lock-bit pages; with several it lists each (address and identity) and `--address`
                chooses (every other block stays in every station unchanged: a note names each, since the firmware
                must advertise the chosen one, or every station sends the same identity); firmware that
                assembles its advertising data at run time is refused with that reason.
                It records an OAD header if the image has one. It writes `DIR/template.json` and `DIR/image.hex`
                (`-o DIR`, default `./NAME`, created if missing) and checks both paths before writing either, as
                every command checks its outputs; a file already at either path — a template, or an `image.hex`
                alone — is replaced only with `--force` (exit 1 and a hint otherwise). All 13 iBeacon images of the shared corpus import
                (TI/GhostYu IAR builds, HM-10 firmware from 89 KB to full 256 KiB dumps). How templates and boards
                are described, and how to add your own: `firmware-templates/README.md` and
                `boards/README.md` in the source. Templates are searched in `--templates DIR`, then
                `$CCBEACON_TEMPLATES`, then the bundled folder; `--template` also takes a folder path.
                """#)
        ])
}
