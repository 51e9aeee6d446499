"""RLinf checkpoints, one API for every caller: the layouts and the rule that tells them from file names
(``layouts``), object keys and root URIs (``keys``), listings through the object store passed in (``listing``),
completeness (``completeness``) and discovery under a run folder (``discovery``)."""
