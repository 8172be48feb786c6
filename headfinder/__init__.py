"""The head finder's room: every head's scores over a corpus, read from the precomputed files or computed once in a
worker process and kept in a cache folder (store.py). No Gradio: ui/ reads it; it never reads ui/. The numbers
themselves are experiments/head_finder.py's."""
