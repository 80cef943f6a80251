"""Moved to harness.proxy (tools/harness/proxy.py); an alias for old imports."""

from harness.proxy import FaultProxy as SwitchingProxy
from harness.proxy import fault_proxy as switching_proxy

__all__ = ["SwitchingProxy", "switching_proxy"]
