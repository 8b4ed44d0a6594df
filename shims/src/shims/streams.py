"""Streams and events of the npu device, shaped like ``torch.cuda``'s.

Work on this device runs synchronously on the host, so every stream is always idle and
every recorded event is already reached: waiting is free and ``query()`` is True. What
code written for CUDA relies on still holds: streams have identities (the C++ core keeps
the current stream per thread and device, so ``torch.npu.current_stream()`` and torch's
generic stream API agree), ``with torch.npu.stream(s)`` makes ``s`` current, and an
``Event(enable_timing=True)`` measures host time between two ``record()`` calls.

``Stream`` is a ``torch.Stream`` (built from its three-integer form, which every torch
release accepts), so ``tensor.record_stream(s)`` and other C++ APIs take it.
"""

from __future__ import annotations

import time
from typing import Any, Optional, Union

import torch

__all__ = ["Stream", "Event", "StreamContext"]

_core: Any = None  # the C++ core, set by the device module's _attach

DeviceLike = Union[None, int, str, torch.device]


def _device_index(where: DeviceLike) -> int:
    from . import device

    return device._index(where)


class Stream(torch.Stream):
    """A stream of one npu device: ``Stream(device=None, priority=0)`` makes a new one."""

    def __new__(cls, device: DeviceLike = None, priority: int = 0, **kwargs: Any) -> Stream:
        if {"stream_id", "device_index", "device_type"} <= kwargs.keys():
            return super().__new__(cls, **kwargs)  # re-wrapping an existing stream
        index = _device_index(device)
        return super().__new__(
            cls, stream_id=_core.new_stream_id(), device_index=index, device_type=_core.device_type()
        )

    def __init__(self, *args: Any, **kwargs: Any) -> None:  # torch.Stream takes no __init__ arguments
        pass

    @classmethod
    def _wrap(cls, stream_id: int, index: int) -> Stream:
        return cls(stream_id=stream_id, device_index=index, device_type=_core.device_type())

    def query(self) -> bool:
        return True

    def synchronize(self) -> None:
        """Nothing is ever pending."""

    def wait_event(self, event: Event) -> None:
        """The event is reached already."""

    def wait_stream(self, stream: torch.Stream) -> None:
        """The other stream is idle already."""

    def record_event(self, event: Optional[Event] = None) -> Event:
        event = Event() if event is None else event
        event.record(self)
        return event

    def __eq__(self, other: object) -> bool:
        return isinstance(other, torch.Stream) and (other.stream_id, other.device_index, other.device_type) == (
            self.stream_id,
            self.device_index,
            self.device_type,
        )

    def __hash__(self) -> int:
        return hash((self.stream_id, self.device_index, self.device_type))

    def __repr__(self) -> str:
        return f"<torch.npu.Stream device=npu:{self.device_index} stream_id={self.stream_id}>"


class Event:
    """A point in a stream. ``enable_timing=True`` lets ``elapsed_time`` measure host time."""

    def __init__(self, enable_timing: bool = False, blocking: bool = False, interprocess: bool = False) -> None:
        self.enable_timing = enable_timing
        self.blocking = blocking
        self.interprocess = interprocess
        self._time: Optional[float] = None
        self.device_index: Optional[int] = None

    def record(self, stream: Optional[torch.Stream] = None) -> None:
        self.device_index = stream.device_index if stream is not None else _core.current_device()
        self._time = time.perf_counter()

    def wait(self, stream: Optional[torch.Stream] = None) -> None:
        """Reached already: nothing to wait for."""

    def query(self) -> bool:
        return True

    def synchronize(self) -> None:
        """Reached already."""

    def elapsed_time(self, end_event: Event) -> float:
        """Milliseconds between this event's record() and ``end_event``'s."""
        if not (self.enable_timing and end_event.enable_timing):
            raise RuntimeError("Both events must be created with enable_timing=True to measure elapsed time")
        if self._time is None or end_event._time is None:
            raise RuntimeError("Both events must be recorded before measuring elapsed time")
        return (end_event._time - self._time) * 1000.0

    def __repr__(self) -> str:
        return f"<torch.npu.Event recorded={self._time is not None}>"


class StreamContext:
    """``with torch.npu.stream(s):`` makes ``s`` the current stream of its device."""

    def __init__(self, stream: Optional[torch.Stream]) -> None:
        self.stream = stream
        self.previous: Optional[int] = None

    def __enter__(self) -> Optional[torch.Stream]:
        if self.stream is not None:
            self.previous = _core.current_stream_id(self.stream.device_index)
            _core.set_current_stream_id(self.stream.device_index, self.stream.stream_id)
        return self.stream

    def __exit__(self, *exc: object) -> None:
        if self.stream is not None and self.previous is not None:
            _core.set_current_stream_id(self.stream.device_index, self.previous)
