"""The core: compat.yaml read with positions, validated into the immutable model, and the questions every part asks of it."""
