"""Test helpers shared by the test suites (importable as ``tests.support``)."""
