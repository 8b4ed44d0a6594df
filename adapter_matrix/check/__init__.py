"""The user's environment judged against the model: detection, the verdict and its fixes, the report, the import-time guard."""
