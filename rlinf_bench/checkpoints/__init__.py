"""RLinf checkpoint knowledge: layouts, key parsing, completeness."""
