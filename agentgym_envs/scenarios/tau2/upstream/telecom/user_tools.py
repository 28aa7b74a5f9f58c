"""The customer's 30 phone tools and the phone-side functions tasks call to break the phone
and check it, with upstream's outputs and state changes
(``tau2.domains.telecom.user_tools.TelecomUserTools``). Every write output ends with the
status bar, as upstream's does."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from agentgym_envs.core.tools import Arg, Tool, ToolError

from ..records import RecordFormatError
from ..toolkit import Tau2World
from .user_models import NETWORK_MODES, APNSettings, CustomerSide, Device, Surroundings, VpnDetails

World = Tau2World[Any]

_SIGNAL_ICONS = {"none": "📵 No Signal", "poor": "📶¹ Poor", "fair": "📶² Fair", "good": "📶³ Good", "excellent": "📶⁴ Excellent"}
_SPEEDS = {"2G": (0.1, 0.4), "3G": (1.0, 5.0), "4G": (10.0, 100.0), "5G": (50.0, 500.0), "none": (0.0, 0.0)}
_SIGNAL_FACTORS = {"poor": 0.2, "fair": 0.5, "good": 0.8, "excellent": 1.0, "none": 0.0}
_SPEED_ADVICE = {
    "Very Poor": "Connection is very slow. Basic web browsing might be difficult.",
    "Poor": "Connection is slow. Web browsing may be sluggish, streaming difficult.",
    "Fair": "Connection is okay for web browsing and some standard definition streaming.",
    "Good": "Connection is good for most activities, including HD streaming.",
    "Excellent": "Connection is very fast.",
}
_SIM_TEXT = {
    "active": "Your SIM card is active and working.",
    "missing": "No SIM card detected in the phone.",
    "locked_pin": "The SIM card is locked with a PIN code.",
    "locked_puk": "The SIM card is locked with a PUK code.",
}
_PERMISSIONS = ("sms", "storage", "phone", "network")


def _side(world: World) -> CustomerSide:
    return world.user_db.data


def _device(world: World) -> Device:
    return world.user_db.data.device


def _on(flag: bool) -> str:
    return "ON" if flag else "OFF"


# ---- the simulation (upstream's private helpers) ---------------------------------------


def status_bar(device: Device) -> str:
    """What the phone's status bar shows."""
    parts = []
    if device.airplane_mode:
        parts.append("✈️ Airplane Mode")
    else:
        parts.append(_SIGNAL_ICONS.get(device.network_signal_strength, "📵 No Signal"))
        if device.network_technology_connected != "none":
            parts.append(device.network_technology_connected)
        if device.data_enabled and device.network_technology_connected != "none":
            parts.append("📱 Data Enabled")
            if device.data_saver_mode:
                parts.append("🔽 Data Saver")
        else:
            parts.append("📵 Data Disabled")
    if device.wifi_enabled and device.wifi_connected:
        parts.append(f"📡 Connected to {device.wifi_ssid}" if device.wifi_ssid else "📡 Enabled")
    if device.vpn_connected:
        parts.append("🔒 VPN Connected")
    parts.append(f"🔋 {device.battery_level}%")
    return " | ".join(parts)


def _with_bar(world: World, text: str) -> str:
    return f"{text}\nStatus Bar: {status_bar(_device(world))}"


def sim_status(device: Device) -> str:
    return "missing" if device.sim_card_missing else device.sim_card_status


def _disconnect(device: Device, technology: str = "none", signal: str = "none", status: str = "no_service") -> None:
    device.network_connection_status, device.network_technology_connected = status, technology
    device.network_signal_strength = signal


def simulate_network_search(world: World) -> None:
    """Upstream's network search: the connection the SIM, the mode preference, airplane mode,
    the APN and the line's status allow, with the signal of the customer's surroundings."""
    device, surroundings = _device(world), _side(world).surroundings
    signals = surroundings.signal_strength
    if sim_status(device) == "active":
        preference = device.network_mode_preference
        technology = {"4g_only": "4G", "3g_only": "3G", "2g_only": "2G"}.get(preference, "4G")
        if preference == "4g_5g_preferred" and signals.get("5G", "none") != "none":
            technology = "5G"
        _disconnect(device, technology, signals.get(technology, "none"), "connected")
    else:
        _disconnect(device)
    if device.airplane_mode or device.active_apn_settings.apn_name == "broken" or not surroundings.line_active:
        _disconnect(device)


def mobile_data_working(device: Device, surroundings: Surroundings) -> bool:
    if device.airplane_mode or device.network_signal_strength == "none":
        return False
    if device.network_connection_status == "no_service":
        return False
    if surroundings.is_abroad and (not device.roaming_enabled or not surroundings.roaming_allowed):
        return False
    return device.data_enabled and not surroundings.mobile_data_usage_exceeded


def speed_test(world: World) -> tuple[float | None, str]:
    """``(Mbps, description)``, or ``(None, "No Connection")``."""
    device = _device(world)
    if not mobile_data_working(device, _side(world).surroundings):
        return None, "No Connection"
    factor = 1.0
    if device.vpn_connected and device.vpn_details and device.vpn_details.server_performance == "poor":
        factor = 0.1
    if device.data_saver_mode:
        factor *= 0.2
    low, high = _SPEEDS.get(device.network_technology_connected, (0.0, 0.0))
    speed = round((low + high) / 2.0 * _SIGNAL_FACTORS.get(device.network_signal_strength, 0.0) * factor, 2)
    for limit, description in ((1, "Very Poor"), (5, "Poor"), (25, "Fair"), (100, "Good")):
        if speed < limit:
            return speed, description
    return speed, "Excellent"


def can_send_mms_now(world: World) -> bool:
    device = _device(world)
    if not mobile_data_working(device, _side(world).surroundings) or device.network_technology_connected == "2G":
        return False
    if device.wifi_calling_enabled and device.wifi_calling_mms_over_wifi:
        return False
    if device.active_apn_settings.mmsc_url is None:
        return False
    app = device.app_statuses.get("messaging")
    return app is not None and app.permissions.storage and app.permissions.sms


def _toggle_airplane_mode(world: World) -> bool:
    device = _device(world)
    was_on = device.airplane_mode
    device.airplane_mode = not was_on
    if was_on:
        device.network_connection_status = "searching"
    if not was_on or device.wifi_enabled:
        device.wifi_connected, device.wifi_ssid, device.wifi_signal_strength = False, None, "none"
    if not was_on and device.vpn_connected:
        _disconnect_vpn(device)
    simulate_network_search(world)
    return device.airplane_mode


def _toggle(world: World, field: str, search: bool = True) -> bool:
    device = _device(world)
    setattr(device, field, not getattr(device, field))
    if search:
        simulate_network_search(world)
    return getattr(device, field)


def _disconnect_vpn(device: Device) -> bool:
    if not device.vpn_connected:
        return False
    device.vpn_connected, device.vpn_details = False, None
    return True


def _connect_vpn(world: World) -> bool | None:
    """Connect the VPN. Upstream assigns one shared ``VpnDetails`` object, which ``break_vpn``
    degrades: every connection after a ``break_vpn`` is poor. Here that holds within the
    episode (``world.vpn_broken``), not across the episodes of a process as upstream's does."""
    device = _device(world)
    if device.vpn_connected:
        return None
    device.vpn_connected = True
    device.vpn_details = VpnDetails("192.168.1.1", "OpenVPN", "poor" if getattr(world, "vpn_broken", False) else "excellent")
    return True


def _granted(permissions: Any) -> list[str]:
    return [name for name in _PERMISSIONS if getattr(permissions, name)]


# ---- tools -----------------------------------------------------------------------------


def check_status_bar(world: World) -> str:
    return f"Status Bar: {status_bar(_device(world))}"


def check_network_status(world: World) -> str:
    device = _device(world)
    lines = [
        f"Airplane Mode: {_on(device.airplane_mode)}",
        f"SIM Card Status: {sim_status(device)}",
        f"Cellular Connection: {device.network_connection_status}",
        f"Cellular Signal: {device.network_signal_strength}",
        f"Cellular Network Type: {device.network_technology_connected}",
        f"Mobile Data Enabled: {'Yes' if device.data_enabled else 'No'}",
        f"Data Roaming Enabled: {'Yes' if device.roaming_enabled else 'No'}",
        f"Wi-Fi Radio: {_on(device.wifi_enabled)}",
        f"Wi-Fi Connected: {'Yes' if device.wifi_connected else 'No'}",
    ]
    if device.wifi_connected:
        lines.append(f"Connected Wi-Fi Network: {device.wifi_ssid}")
    return "\n".join(lines)


def check_network_mode_preference(world: World) -> str:
    return f"Network Mode Preference: {_device(world).network_mode_preference}"


def set_network_mode_preference(world: World, mode: str) -> str:
    if mode not in NETWORK_MODES:
        return _with_bar(world, f"Failed to set network mode: '{mode}' is not a valid option. "
                                f"Please use one of: {', '.join(NETWORK_MODES)}")
    _device(world).network_mode_preference = mode
    simulate_network_search(world)
    return _with_bar(world, f"Preferred Network Mode set to: {mode}")


def run_speed_test(world: World) -> str:
    speed, description = speed_test(world)
    if speed is None:
        return f"Speed test failed: {description or 'Could not determine speed'}."
    return f"Speed Test Result: {speed:.2f} Mbps ({description}). {_SPEED_ADVICE.get(description, '')}"


def toggle_airplane_mode(world: World) -> str:
    return _with_bar(world, f"Airplane Mode is now {_on(_toggle_airplane_mode(world))}.")


def check_sim_status(world: World) -> str:
    return _SIM_TEXT[sim_status(_device(world))]


def reseat_sim_card(world: World) -> str:
    _device(world).sim_card_missing = False
    simulate_network_search(world)
    return _with_bar(world, "SIM card re-seated successfully.")


def toggle_data(world: World) -> str:
    return _with_bar(world, f"Mobile Data is now {_on(_toggle(world, 'data_enabled'))}.")


def toggle_roaming(world: World) -> str:
    return _with_bar(world, f"Data Roaming is now {_on(_toggle(world, 'roaming_enabled'))}.")


def check_data_restriction_status(world: World) -> str:
    return "Data Saver mode is ON (limits data usage)." if _device(world).data_saver_mode else "Data Saver mode is OFF."


def toggle_data_saver_mode(world: World) -> str:
    return _with_bar(world, f"Data Saver Mode is now {_on(_toggle(world, 'data_saver_mode', search=False))}.")


def check_apn_settings(world: World) -> str:
    apn = _device(world).active_apn_settings
    return (f"Current APN Name: {apn.apn_name or 'Not Set'}\nMMSC URL (for picture messages): {apn.mmsc_url or 'Not Set'}\n"
            "(These are technical settings, usually best left unchanged.)")


def set_apn_settings(world: World, apn_settings: dict[str, Any]) -> str:
    known = {"apn_name", "reset_at_reboot", "mms_apn", "mmsc_url", "mms_proxy", "mms_port"}
    extra = sorted(set(apn_settings) - known)
    if extra:  # upstream's model forbids extra fields
        raise ToolError(f"APNSettings has no field(s) {extra}; its fields are {sorted(known)}")
    try:
        settings = APNSettings.from_dict(apn_settings)
    except RecordFormatError as exc:
        raise ToolError(str(exc)) from None
    _device(world).active_apn_settings = settings
    simulate_network_search(world)
    return _with_bar(world, f"APN settings set to: {settings.apn_name}")


def reset_apn_settings(world: World) -> str:
    _device(world).active_apn_settings.reset_at_reboot = True
    simulate_network_search(world)
    return _with_bar(world, "APN settings will reset at reboot.")


def check_wifi_status(world: World) -> str:
    device = _device(world)
    if not device.wifi_enabled:
        return "Wi-Fi is turned OFF."
    if device.wifi_connected:
        return f"Wi-Fi is ON and connected to '{device.wifi_ssid}'. Signal strength: {device.wifi_signal_strength}."
    return "Wi-Fi is ON but not connected to any network."


def toggle_wifi(world: World) -> str:
    device = _device(world)
    if device.airplane_mode:
        return _with_bar(world, "Cannot change Wi-Fi settings while Airplane Mode is ON.")
    device.wifi_enabled = not device.wifi_enabled
    if not device.wifi_enabled:
        device.wifi_connected, device.wifi_ssid, device.wifi_signal_strength = False, None, "none"
    return _with_bar(world, f"Wi-Fi is now {_on(device.wifi_enabled)}.")


def check_wifi_calling_status(world: World) -> str:
    return f"Wi-Fi Calling is currently turned {_on(_device(world).wifi_calling_enabled)}."


def toggle_wifi_calling(world: World) -> str:
    return _with_bar(world, f"Wi-Fi Calling is now {_on(_toggle(world, 'wifi_calling_enabled', search=False))}.")


def _python_repr(details: VpnDetails) -> str:
    """``str(details.model_dump())`` as upstream shows it (the performance is an Enum member)."""
    level = details.server_performance
    return (f"{{'server_address': {details.server_address!r}, 'protocol': {details.protocol!r}, "
            f"'server_performance': <PerformanceLevel.{level.upper()}: {level!r}>}}")


def check_vpn_status(world: World) -> str:
    device = _device(world)
    if device.vpn_connected:
        if device.vpn_details:
            return f"VPN is ON and connected. Details: {_python_repr(device.vpn_details)}"
        return "VPN is ON and connected (no specific details available)."
    if device.vpn_enabled_setting:
        return "VPN is turned ON in settings, but currently not connected."
    return "VPN is turned OFF."


def connect_vpn(world: World) -> str:
    if _connect_vpn(world) is None:
        return "VPN already connected."
    return _with_bar(world, "VPN connected successfully.")


def disconnect_vpn(world: World) -> str:
    done = _disconnect_vpn(_device(world))
    return _with_bar(world, "VPN disconnected successfully." if done else "No active VPN connection to disconnect.")


def check_installed_apps(world: World) -> str:
    return f"The following apps are installed on the phone: {', '.join(_device(world).app_statuses)}"


def check_app_status(world: World, app_name: str) -> str:
    app = _device(world).app_statuses.get(app_name)
    if app is None:
        return f"App '{app_name}' not found on this phone."
    granted = _granted(app.permissions)
    lines = [f"Status for App: {app_name}"]
    lines += [" - Permissions Granted:", *(f"   - {p}" for p in granted)] if granted else [" - Permissions: None granted."]
    return "\n".join(lines)


def check_app_permissions(world: World, app_name: str) -> str:
    app = _device(world).app_statuses.get(app_name)
    if app is None:
        return f"App '{app_name}' not found on this phone."
    granted = _granted(app.permissions)
    if not granted:
        return f"App '{app_name}' currently has no permissions granted."
    return f"App '{app_name}' has permission for: {', '.join(granted)}."


def grant_app_permission(world: World, app_name: str, permission: str) -> str:
    app = _device(world).app_statuses.get(app_name)
    permission = permission.lower()
    if app is None:
        result = f"Error. App '{app_name}' not found. Cannot grant permission."
    elif permission not in _PERMISSIONS:
        result = (f"Error. Permission '{permission}' not tracked for app '{app_name}', "
                  f"available permissions: {list(_PERMISSIONS)}")
    else:
        setattr(app.permissions, permission, True)
        result = f"Success. Permission '{permission}' granted to app '{app_name}'."
    return _with_bar(world, result)


def can_send_mms(world: World) -> str:
    return f"Your messaging app {'can' if can_send_mms_now(world) else 'cannot'} send MMS messages."


def reboot_device(world: World) -> str:
    device = _device(world)
    lines = []
    if device.active_apn_settings.reset_at_reboot:
        lines.append("Resetting APN settings...")
        device.active_apn_settings = APNSettings()
    lines.append("Restarting network services...")
    device.network_connection_status = "searching"
    simulate_network_search(world)
    return _with_bar(world, "\n".join(lines))


def check_payment_request(world: World) -> str:
    request = _side(world).surroundings.payment_request
    if request is None:
        return "No payment request has been made."
    return f"You have a payment request for bill {request.bill_id} of {request.amount_due} USD."


def make_payment(world: World) -> str:
    request = _side(world).surroundings.payment_request
    if request is None:
        return "You do not have a payment request."
    request.paid = True
    return f"Payment of {request.amount_due} USD has been made for bill {request.bill_id}."


# ---- task functions: set-up and assertions (not tools) ---------------------------------


def set_user_info(world: World, name: str, phone_number: str) -> None:
    surroundings = _side(world).surroundings
    surroundings.name, surroundings.phone_number = name, phone_number


def set_user_location(world: World, abroad: bool) -> None:
    _side(world).surroundings.is_abroad = abroad


def _turn(toggle: Callable[[World], bool], on: bool, text: str) -> Callable[[World], str]:
    def turn(world: World) -> str:
        if toggle(world) != on:
            toggle(world)
        return text

    return turn


turn_airplane_mode_on = _turn(_toggle_airplane_mode, True, "Airplane Mode is now ON.")
turn_airplane_mode_off = _turn(_toggle_airplane_mode, False, "Airplane Mode is now OFF.")
turn_roaming_on = _turn(lambda w: _toggle(w, "roaming_enabled"), True, "Data Roaming is now ON.")
turn_roaming_off = _turn(lambda w: _toggle(w, "roaming_enabled"), False, "Data Roaming is now OFF.")
turn_data_off = _turn(lambda w: _toggle(w, "data_enabled"), False, "Data connection broken.")
turn_data_saver_mode_on = _turn(lambda w: _toggle(w, "data_saver_mode", False), True, "Data Saver Mode is now ON.")
turn_data_saver_mode_off = _turn(lambda w: _toggle(w, "data_saver_mode", False), False, "Data Saver Mode is now OFF.")


def turn_data_on(world: World) -> str:
    _device(world).data_enabled = True
    return "Data connection restored."


def unseat_sim_card(world: World) -> str:
    _device(world).sim_card_missing = True
    simulate_network_search(world)
    return "SIM card un-seated successfully."


def lock_sim_card(world: World, mode: str) -> str:
    _device(world).sim_card_status = {"pin": "locked_pin", "puk": "locked_puk"}.get(mode, _device(world).sim_card_status)
    simulate_network_search(world)
    return f"SIM card locked successfully in {mode} mode."


def break_apn_settings(world: World) -> str:
    _device(world).active_apn_settings.apn_name = "broken"
    simulate_network_search(world)
    return "APN settings broken. Please call reset_apn_settings() to fix."


def break_apn_mms_setting(world: World) -> str:
    _device(world).active_apn_settings.mmsc_url = None
    return "APN MMS setting broken. Please call reset_apn_settings() to fix."


def set_wifi_calling(world: World, enabled: bool, mms_over_wifi: bool | None = None) -> str:
    device = _device(world)
    device.wifi_calling_enabled = enabled
    message = f"Wi-Fi Calling is now {_on(enabled)}."
    if mms_over_wifi is not None:
        device.wifi_calling_mms_over_wifi = mms_over_wifi
        message += f"\nMMS over Wi-Fi is now {_on(mms_over_wifi)}."
    return message


def break_vpn(world: World) -> str:
    _connect_vpn(world)
    _device(world).vpn_details.server_performance = "poor"  # type: ignore[union-attr]
    world.vpn_broken = True  # type: ignore[attr-defined]  # upstream's shared details object is now poor
    return "VPN connection broken."


def remove_app_permission(world: World, app_name: str, permission: str) -> tuple[bool, str]:
    app = _device(world).app_statuses.get(app_name)
    permission = permission.lower()
    if app is None:
        return False, f"App '{app_name}' not found. Cannot remove permission."
    if permission not in _PERMISSIONS:
        return False, f"Permission '{permission}' not tracked for app '{app_name}'."
    setattr(app.permissions, permission, False)
    return True, f"Permission '{permission}' removed from app '{app_name}'."


def assert_airplane_mode_status(world: World, expected_status: bool) -> bool:
    return _device(world).airplane_mode == expected_status


def assert_service_status(world: World, expected_status: str) -> bool:
    return _device(world).network_connection_status == expected_status


def assert_mobile_data_status(world: World, expected_status: bool) -> bool:
    return mobile_data_working(_device(world), _side(world).surroundings) == expected_status


def assert_mobile_roaming_status(world: World, expected_status: bool) -> bool:
    return _device(world).roaming_enabled == expected_status


def assert_mobile_data_saver_mode_status(world: World, expected_status: bool) -> bool:
    return _device(world).data_saver_mode == expected_status


def assert_internet_speed(world: World, expected_speed: float, expected_desc: str | None = None) -> bool:
    speed, description = speed_test(world)
    fast = (speed or 0.0) >= expected_speed
    return fast if expected_desc is None else fast and description.lower() == expected_desc.lower()


def assert_internet_not_excellent(world: World) -> bool:
    return speed_test(world)[1].lower() != "excellent"


def assert_can_send_mms(world: World, expected_status: bool) -> bool:
    return can_send_mms_now(world) == expected_status


def assert_mobile_data_usage_exceeded(world: World, expected_status: bool) -> bool:
    return _side(world).surroundings.mobile_data_usage_exceeded == expected_status


# ---- declarations ----------------------------------------------------------------------

_APP = Arg("app_name", "string", "app_name", "The name of the app.")


def _tool(fn: Callable[..., str], description: str, *args: Arg, kind: str = "read") -> Tool:
    return Tool(fn.__name__, description, args, fn, kind=kind)


TOOLS: tuple[Tool, ...] = (
    _tool(check_status_bar, "Shows what icons are currently visible in your phone's status bar (the area at the top of the screen). Displays network signal strength, mobile data status (enabled, disabled, data saver), Wi-Fi status, and battery level."),
    _tool(check_network_status, "Checks your phone's connection status to cellular networks and Wi-Fi. Shows airplane mode status, signal strength, network type, whether mobile data is enabled, and whether data roaming is enabled."),
    _tool(check_network_mode_preference, "Shows the current network mode preference."),
    _tool(set_network_mode_preference, "Changes the type of cellular network your phone prefers to connect to (e.g., 5G, LTE/4G, 3G). Higher-speed networks (LTE/5G) provide faster data but may use more battery.",
          Arg("mode", "string", "network_mode", f"The network mode preference, one of: {', '.join(NETWORK_MODES)}."), kind="write"),
    _tool(run_speed_test, "Measures your current internet connection speed (download speed). Provides information about connection quality and what activities it can support."),
    _tool(toggle_airplane_mode, "Toggles Airplane Mode ON or OFF. When ON, it disconnects all wireless communications including cellular, Wi-Fi, and Bluetooth.\n\nReturns the new state of airplane_mode.", kind="write"),
    _tool(check_sim_status, "Checks if your SIM card is working correctly and displays its current status. Shows if the SIM is active, missing, or locked with a PIN or PUK code."),
    _tool(reseat_sim_card, "Simulates removing and reinserting your SIM card. This can help resolve recognition issues.", kind="write"),
    _tool(toggle_data, "Toggles your phone's mobile data connection ON or OFF. Controls whether your phone can use cellular data for internet access when Wi-Fi is unavailable.\n\nReturns the new data connection status.", kind="write"),
    _tool(toggle_roaming, "Toggles Data Roaming ON or OFF. When ON, your phone can use data networks in areas outside your carrier's coverage.\n\nReturns the new data roaming status.", kind="write"),
    _tool(check_data_restriction_status, "Checks if your phone has any data-limiting features active. Shows if Data Saver mode is on."),
    _tool(toggle_data_saver_mode, "Toggles Data Saver mode ON or OFF. When ON, it reduces data usage, which may affect data speed.\n\nReturns the new data saver mode status.", kind="write"),
    _tool(check_apn_settings, "Checks the technical APN settings your phone uses to connect to your carrier's mobile data network. Shows current APN name and MMSC URL for picture messaging."),
    _tool(set_apn_settings, "Sets the APN settings for the phone.",
          Arg("apn_settings", "object", "apn_settings", "The APN settings: apn_name ('internet' or 'broken'), reset_at_reboot, mms_apn, mmsc_url, mms_proxy, mms_port."), kind="write"),
    _tool(reset_apn_settings, "Resets your APN settings to the default settings.", kind="write"),
    _tool(check_wifi_status, "Checks your Wi-Fi connection status. Shows if Wi-Fi is turned on, which network you're connected to (if any), and the signal strength."),
    _tool(toggle_wifi, "Toggles your phone's Wi-Fi radio ON or OFF. Controls whether your phone can discover and connect to wireless networks for internet access.\n\nReturns the new Wi-Fi status.", kind="write"),
    _tool(check_wifi_calling_status, "Checks if Wi-Fi Calling is enabled on your device. This feature allows you to make and receive calls over a Wi-Fi network instead of using the cellular network."),
    _tool(toggle_wifi_calling, "Toggles Wi-Fi Calling ON or OFF. This feature allows you to make and receive calls over Wi-Fi instead of the cellular network, which can help in areas with weak cellular signal.\n\nReturns the new Wi-Fi Calling status.", kind="write"),
    _tool(check_vpn_status, "Checks if you're using a VPN (Virtual Private Network) connection. Shows if a VPN is active, connected, and displays any available connection details."),
    _tool(connect_vpn, "Connects to your VPN (Virtual Private Network).", kind="write"),
    _tool(disconnect_vpn, "Disconnects any active VPN (Virtual Private Network) connection. Stops routing your internet traffic through a VPN server, which might affect connection speed or access to content.", kind="write"),
    _tool(check_installed_apps, "Returns the name of all installed apps on the phone."),
    _tool(check_app_status, "Checks detailed information about a specific app. Shows its permissions and background data usage settings.", _APP),
    _tool(check_app_permissions, "Checks what permissions a specific app currently has. Shows if the app has access to features like storage, camera, location, etc.", _APP),
    _tool(grant_app_permission, "Gives a specific permission to an app (like access to storage, camera, or location). Required for some app functions to work properly.",
          Arg("app_name", "string", "app_name", "The name of the app to grant the permission to."),
          Arg("permission", "string", "permission", "The permission to grant, should be lowercase."), kind="write"),
    _tool(can_send_mms, "Checks if the default messaging app can send MMS messages."),
    _tool(reboot_device, "Restarts your phone completely. This can help resolve many temporary software glitches by refreshing all running services and connections.", kind="write"),
    _tool(check_payment_request, "Checks if the agent has sent you a payment request."),
    _tool(make_payment, "Makes a payment for the bill that the agent has sent you.", kind="write"),
)

FUNCTIONS: dict[str, Callable[..., Any]] = {
    **{tool.name: tool.fn for tool in TOOLS},
    "simulate_network_search": simulate_network_search,
    **{f.__name__: f for f in (set_user_info, set_user_location, turn_data_on, unseat_sim_card, lock_sim_card,
                               break_apn_settings, break_apn_mms_setting, set_wifi_calling, break_vpn,
                               remove_app_permission, assert_airplane_mode_status, assert_service_status,
                               assert_mobile_data_status, assert_mobile_roaming_status,
                               assert_mobile_data_saver_mode_status, assert_internet_speed,
                               assert_internet_not_excellent, assert_can_send_mms, assert_mobile_data_usage_exceeded)},
    "turn_airplane_mode_on": turn_airplane_mode_on,
    "turn_airplane_mode_off": turn_airplane_mode_off,
    "turn_roaming_on": turn_roaming_on,
    "turn_roaming_off": turn_roaming_off,
    "turn_data_off": turn_data_off,
    "turn_data_saver_mode_on": turn_data_saver_mode_on,
    "turn_data_saver_mode_off": turn_data_saver_mode_off,
}
