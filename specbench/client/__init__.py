"""The HTTP client: SSE decoding, the request record, the senders, and control calls."""
