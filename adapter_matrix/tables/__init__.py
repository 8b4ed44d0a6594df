"""Compatibility tables drawn from the model and the records: views, formats, and the blocks between markers."""
