import pytest

import trainings_left


@pytest.fixture(autouse=True)
def leaves_no_training_behind(request):
    """Every test here leaves no training, training process or slot behind (tests/trainings_left.py)."""
    yield
    trainings_left.check(request)
