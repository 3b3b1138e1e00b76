; Power-mode entry for the CC2541 (SWRU191F p. 63): after the write of 1 to PCON, the next
; instruction must not start on a 4-byte boundary. The stub sits at a fixed address so that this
; holds whatever the C code around it does: MOV PCON,#1 is 3 bytes at 0x7EF0, so the NOP after
; it starts at 0x7EF3. A test checks the address in the linker map.
        .module pm_entry
        .globl  _enter_power_mode

        .area   PMENTRY (ABS,CODE)
        .org    0x7EF0
_enter_power_mode:
        mov     0x87,#0x01      ; PCON = 1: enter the mode SLEEPCMD selects; wakes on the sleep timer
        nop                     ; first instruction after wake-up (at 0x7EF3, not 4-byte aligned)
        ret
