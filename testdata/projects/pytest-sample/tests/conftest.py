import pytest


@pytest.fixture
def broken_fixture():
    raise RuntimeError("fixture could not connect")
