"""A training script as users write it: backward() on npu:0 and npu:1, then the end of the
script, with no clean-up of any kind. tests/conformance/test_exit.py runs it as a plain
interpreter and checks its exit status."""

import torch

import shims  # noqa: F401 - activates npu (also done by `import torch` under autoload)

torch.manual_seed(0)
model = torch.nn.Linear(4, 2).to("npu")
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for _ in range(3):
    optimizer.zero_grad()
    model(torch.randn(8, 4, device="npu")).square().mean().backward()
    optimizer.step()

other = torch.nn.Linear(4, 2).to("npu:1")
other(torch.randn(8, 4, device="npu:1")).sum().backward()
print(float(model.weight.detach().sum()), float(other.weight.grad.sum()))
