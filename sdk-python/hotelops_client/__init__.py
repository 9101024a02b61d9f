"""Python client of the HotelOps gRPC API: generated stubs (``hotelops_client.v1``), a channel with bearer
authentication, client-credentials tokens, the ErrorInfo of a failed call, and webhook verification."""

from .channel import bearer_interceptor, open_channel
from .errors import error_info
from .tokens import ClientCredentials
from .webhooks import WebhookVerificationError, verify_standard_webhook, verify_webhook

__all__ = ["ClientCredentials", "WebhookVerificationError", "bearer_interceptor", "error_info", "open_channel", "verify_standard_webhook", "verify_webhook"]
