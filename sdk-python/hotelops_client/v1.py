"""The generated messages and stubs of every service, by short name:
``from hotelops_client.v1 import status, status_grpc``."""

from ._proto.hotelops.admin.v1 import admin_pb2 as admin, admin_pb2_grpc as admin_grpc
from ._proto.hotelops.api.v1 import rest_pb2 as api
from ._proto.hotelops.auth.v1 import auth_pb2 as auth, auth_pb2_grpc as auth_grpc
from ._proto.hotelops.connectivity.v1 import connectivity_pb2 as connectivity, connectivity_pb2_grpc as connectivity_grpc
from ._proto.hotelops.folio.v1 import folio_pb2 as folio, folio_pb2_grpc as folio_grpc
from ._proto.hotelops.inventory.v1 import inventory_pb2 as inventory, inventory_pb2_grpc as inventory_grpc
from ._proto.hotelops.mobile.v1 import mobile_pb2 as mobile, mobile_pb2_grpc as mobile_grpc
from ._proto.hotelops.panel.v1 import api_access_pb2 as api_access, api_access_pb2_grpc as api_access_grpc
from ._proto.hotelops.reservation.v1 import reservation_pb2 as reservation, reservation_pb2_grpc as reservation_grpc
from ._proto.hotelops.status.v1 import status_pb2 as status, status_pb2_grpc as status_grpc
from ._proto.hotelops.webhook.v1 import webhook_pb2 as webhook, webhook_pb2_grpc as webhook_grpc

__all__ = [
    "admin", "admin_grpc", "api", "api_access", "api_access_grpc", "auth", "auth_grpc", "connectivity", "connectivity_grpc", "folio", "folio_grpc",
    "inventory", "inventory_grpc", "mobile", "mobile_grpc", "reservation", "reservation_grpc", "status", "status_grpc",
    "webhook", "webhook_grpc",
]
