"""The model run under switches: forward passes that compare, patch or read it layer by layer (torch in,
numpy out). Imports model/ and analysis/; model/ and analysis/ never import it (tests/test_rooms.py)."""
