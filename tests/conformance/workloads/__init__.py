"""The workloads group: small models of the kinds people train, on npu and on CPU, compared."""
