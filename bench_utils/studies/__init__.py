"""The studies, one plug-in module each: serving with changing batch sizes (serving.py). Each holds a
`STUDY` (base.BaseStudy, a results/studies.Study) registered
by name in results/studies.REGISTRY; nothing in the core imports these modules."""
