"""Recorded traffic: a run's HTTP and botocore exchanges written once and replayed after.

The modules here are private; the public names (`Recording`, `recorded`, `RecordMode`,
`RecordingError`, `RecordingDriftError`) are imported from `agentcore.testing`.

- `_recording`: the `Recording` (record, replay, drift) and `recorded`;
- `_format`: the file format, the scrubbing of secrets, the records of a request and an answer;
- `_exchange`: one request matched to its record and the answer replayed from it;
- `_http` and `_boto`: the wrappers of an httpx client and a botocore client;
- `_drift`: how a request that matches no record is described (the nearest one and what differs).
"""
