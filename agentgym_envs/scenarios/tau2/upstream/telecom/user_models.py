"""The customer's side (upstream ``tau2.domains.telecom.user_data_model``): the phone's
state and the customer's surroundings, held in ``user_db.toml``."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from ..records import Record
from ..store import DocumentDB

SimStatus = Literal["active", "missing", "locked_pin", "locked_puk"]
NetworkTechnology = Literal["none", "2G", "3G", "4G", "5G"]
NetworkModePreference = Literal["4g_5g_preferred", "4g_only", "3g_only", "2g_only"]
SignalStrength = Literal["none", "poor", "fair", "good", "excellent"]
PerformanceLevel = Literal["unknown", "poor", "fair", "good", "excellent"]
NetworkStatus = Literal["connected", "searching", "no_service", "emergency_only"]
NETWORK_MODES: tuple[str, ...] = ("4g_5g_preferred", "4g_only", "3g_only", "2g_only")


@dataclass
class APNSettings(Record):
    apn_name: Literal["internet", "broken"] = "internet"
    reset_at_reboot: bool = False
    mms_apn: str | None = "mms"
    mmsc_url: str | None = "http://mms.carrier.com/mms/wapenc"
    mms_proxy: str | None = None
    mms_port: int | None = None


@dataclass
class VpnDetails(Record):
    server_address: str | None = None
    protocol: str | None = None
    server_performance: PerformanceLevel = "unknown"


@dataclass
class AppPermissions(Record):
    sms: bool = False
    storage: bool = False
    phone: bool = False
    network: bool = False


@dataclass
class AppStatus(Record):
    app_name: str
    permissions: AppPermissions = field(default_factory=AppPermissions)


def _default_apps() -> dict[str, AppStatus]:
    return {
        "messaging": AppStatus("messaging", AppPermissions(sms=True, storage=True, phone=True)),
        "browser": AppStatus("browser", AppPermissions(network=True, storage=True)),
    }


@dataclass
class Device(Record):
    """The phone (upstream ``MockPhoneAttributes``)."""

    sim_card_status: SimStatus = "active"
    sim_card_missing: bool = False
    airplane_mode: bool = False
    network_signal_strength: SignalStrength = "good"
    network_technology_connected: NetworkTechnology = "5G"
    network_connection_status: NetworkStatus = "connected"
    battery_level: int = 80
    data_enabled: bool = True
    roaming_enabled: bool = False
    network_mode_preference: NetworkModePreference = "4g_5g_preferred"
    active_apn_settings: APNSettings = field(default_factory=APNSettings)
    wifi_enabled: bool = False
    wifi_connected: bool = False
    wifi_ssid: str | None = None
    wifi_signal_strength: SignalStrength = "none"
    wifi_calling_enabled: bool = False
    wifi_calling_mms_over_wifi: bool = False
    data_saver_mode: bool = False
    vpn_enabled_setting: bool = False
    vpn_connected: bool = False
    vpn_details: VpnDetails | None = None
    app_statuses: dict[str, AppStatus] = field(default_factory=_default_apps)


@dataclass
class PaymentRequest(Record):
    bill_id: str
    amount_due: float
    paid: bool = False


def _default_signal() -> dict[str, str]:
    return {"2G": "poor", "3G": "fair", "4G": "good", "5G": "excellent"}


@dataclass
class Surroundings(Record):
    """Where the customer is (upstream ``UserSurroundings``)."""

    name: str | None = None
    phone_number: str | None = None
    is_abroad: bool = False
    roaming_allowed: bool = False
    signal_strength: dict[str, SignalStrength] = field(default_factory=_default_signal)
    mobile_data_usage_exceeded: bool = False
    line_active: bool = True
    payment_request: PaymentRequest | None = None


@dataclass
class CustomerSide(Record):
    """The whole customer-side database (upstream ``TelecomUserDB``)."""

    device: Device = field(default_factory=Device)
    surroundings: Surroundings = field(default_factory=Surroundings)


class TelecomUserDB(DocumentDB[CustomerSide]):
    """The customer's side of an episode (``world.user_db.data`` is the :class:`CustomerSide`)."""

    ROOT = CustomerSide
