"""The ErrorInfo detail of a failed call: our error code, field problems and the request id."""

from __future__ import annotations

import grpc

from ._proto.google.rpc import status_pb2
from ._proto.hotelops.api.v1 import rest_pb2


def error_info(err: grpc.RpcError) -> rest_pb2.ErrorInfo | None:
    """Decodes the ``grpc-status-details-bin`` trailer (a google.rpc.Status) and answers its ErrorInfo, if any.
    ``error_info(e).code`` is the same snake_case code the REST error body carries (``not_found``...)."""
    trailers = err.trailing_metadata() if hasattr(err, "trailing_metadata") else None
    for key, value in trailers or ():
        if key != "grpc-status-details-bin":
            continue
        status = status_pb2.Status.FromString(value)
        for detail in status.details:
            if detail.Is(rest_pb2.ErrorInfo.DESCRIPTOR):
                info = rest_pb2.ErrorInfo()
                detail.Unpack(info)
                return info
    return None
