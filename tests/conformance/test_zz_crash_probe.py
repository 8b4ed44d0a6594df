import os, signal
def test_crash():
    os.kill(os.getpid(), signal.SIGSEGV)
def test_after():
    assert True
