"""Test plans, one nox cell's run, its result record, evidence and frozen releases, tiers."""
