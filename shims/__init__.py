"""The reference adapter: a PrivateUse1 device named ``npu`` whose memory is host memory."""
