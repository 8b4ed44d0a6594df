"""Facts from package indexes: torch's, the companions' and an adapter's own releases; validate --upstream and init."""
