"""Model providers: the request/completion types (base), the wire formats (wire), the HTTP client
with its retry policy (http), the baselines (baseline), and build_model (build).

Nothing is imported here, so that importing the types does not import `requests`.
"""
