"""The stack above the adapter (vllm-ascend on torch-npu on torch): each layer's pins judged
(:mod:`.judge`), the candidates of a stack's resolution (:mod:`.space`), the fixes that are
whole stacks, found by resolvelib (:mod:`.search`), and ``check``'s stack step, which folds them
into the answer (:mod:`.step`). Code is imported from its module: this package exports nothing."""
