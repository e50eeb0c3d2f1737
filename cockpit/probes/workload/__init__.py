"""Any workload through the gates, in the CHILD python: correctness against the workload's oracle
(`check`), timing against its references (`timing`), one shape under ncu (`profile`). Run by
`probes/workload_probe.py`; every module here needs torch."""
