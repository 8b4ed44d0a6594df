"""The binary check: the installed adapter's libraries read as the dynamic loader will (docs/development.md)."""
