"""The class in the room: a lecturer's class, its step and its students' answers (store.py, over sqlite3), the
followers waiting for the next step (board.py), and work done once for everyone who needs it (once.py).

No Gradio and no ui/: ui/classroom/ reads these; they never read ui/. docs/classes.md says what a class keeps.
"""
