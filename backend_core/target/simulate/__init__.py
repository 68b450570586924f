"""Run a firmware on a simulator and read what it says: QEMU or a Corstone FVP (simulator.py), a
runner that reads its model through semihosting (semihosting.py), the UART parser (uart.py) and its
records (uart_records.py), Cortex-M fault reports (faults.py), and what a stopped firmware was doing
(last_seen.py). What the run means is judge's to say."""
