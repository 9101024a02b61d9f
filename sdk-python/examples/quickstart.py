"""The Python client against a running server: status, a partner's availability with client credentials, a staff
login and dashboard, and a refused call with its ErrorInfo. Prints one JSON line.

Settings from the environment: HOTELOPS_URL (default http://localhost:8080), CLIENT_ID, CLIENT_SECRET,
PROPERTY_CODE, STAFF_EMAIL, STAFF_PASSWORD (HOTEL_CODE defaults to PROPERTY_CODE).
Run from sdk-python/: PYTHONPATH=. python3 examples/quickstart.py
"""

import json
import os
import uuid

import grpc

from hotelops_client import ClientCredentials, error_info, open_channel
from hotelops_client.v1 import auth, auth_grpc, connectivity, connectivity_grpc, mobile, mobile_grpc, status, status_grpc

base_url = os.environ.get("HOTELOPS_URL", "http://localhost:8080")
property_code = os.environ["PROPERTY_CODE"]
out = {}

# Public: no token.
with open_channel(base_url) as channel:
    out["status"] = status_grpc.StatusServiceStub(channel).GetStatus(status.GetStatusRequest()).status

# Partner: a client-credentials token, fetched once and renewed before it expires.
credentials = ClientCredentials(base_url, os.environ["CLIENT_ID"], os.environ["CLIENT_SECRET"], scope="availability.read")
with open_channel(base_url, credentials) as channel:
    partner = connectivity_grpc.ConnectivityServiceStub(channel)
    # `from` is a Python keyword: pass it by dict
    availability = partner.GetAvailability(connectivity.GetAvailabilityRequest(property_code=property_code, **{"from": "2027-05-01", "to": "2027-05-03"}))
    out["availability"] = {room.code: [day.available for day in room.days] for room in availability.room_types}
    try:
        partner.GetAvailability(connectivity.GetAvailabilityRequest(property_code=property_code, **{"from": "2027-05-03", "to": "2027-05-01"}))
    except grpc.RpcError as err:
        info = error_info(err)  # our code, the fields at fault and the request id, from grpc-status-details-bin
        out["error"] = {"status": err.code().name, "code": info.code, "fields": [d.field for d in info.details], "requestId": info.request_id}

# Staff: log in over gRPC, then call the mobile API with the session's access token.
with open_channel(base_url) as channel:
    login = auth_grpc.AuthServiceStub(channel).Login(
        auth.LoginRequest(hotel_code=os.environ.get("HOTEL_CODE", property_code), email=os.environ["STAFF_EMAIL"], password=os.environ["STAFF_PASSWORD"], device_id=str(uuid.uuid4()), device_name="Python script")
    )
if not login.HasField("tokens"):
    raise SystemExit(f"e-mail verification is on: answer challenge {login.challenge_id} with AuthService.VerifyLogin")
with open_channel(base_url, login.tokens.access_token) as channel:
    dashboard = mobile_grpc.MobileServiceStub(channel).GetDashboard(mobile.GetDashboardRequest())
    out["dashboard"] = {"businessDate": dashboard.business_date, "roomsTotal": dashboard.rooms_total}
    auth_grpc.AuthServiceStub(channel).Logout(auth.LogoutRequest())

print(json.dumps(out))
