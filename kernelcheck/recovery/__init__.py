"""Replay-based recovery of kernel launches from their idempotency verdicts.

:func:`plan_launch` (a pure function of the verdict, the byte footprint, the allocation table
and the configuration) says what to save before a launch; :class:`RecoverySession` runs
launches on a :class:`Device`, detects faults (device errors, redundant execution, user
checks) and replays the shortest re-executable suffix of the launch log.
"""

from kernelcheck.recovery.detect import Checksum
from kernelcheck.recovery.device import Device, DeviceError, EmulatorDevice
from kernelcheck.recovery.footprint import Footprint, instance_footprint, written_allocations
from kernelcheck.recovery.policy import RecoveryConfig, SavePlan, plan_launch
from kernelcheck.recovery.report import Detection, LaunchRecord, RecoveryReport, Replay
from kernelcheck.recovery.session import KernelModule, RecoverySession
from kernelcheck.recovery.window import WindowEntry, replay_window, window_violations

__all__ = ["Checksum", "Device", "DeviceError", "EmulatorDevice", "Footprint",
           "instance_footprint", "written_allocations", "RecoveryConfig", "SavePlan",
           "plan_launch", "Detection", "LaunchRecord", "RecoveryReport", "Replay",
           "KernelModule", "RecoverySession", "WindowEntry", "replay_window",
           "window_violations"]
