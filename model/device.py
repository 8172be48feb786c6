"""CUDA when there is a GPU, the CPU otherwise; nothing requires a GPU."""
import torch


def default_device() -> torch.device:
    return torch.device("cuda" if torch.cuda.is_available() else "cpu")
