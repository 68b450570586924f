"""The boards, from one place: the firmware's board table kernels/boards.json (table.py: Board, a
CPU's QEMU/FVP board), the boards a model is checked against with the MCUs of resources/boards/
mcus.json (specs.py: BoardSpec), an MCU's sizes laid out on the QEMU board of its core (sized.py), and
which board a run uses, resolved once (resolve.py)."""
