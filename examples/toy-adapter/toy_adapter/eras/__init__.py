"""One module per torch era: what registering the device takes on those releases."""
