; Definitions for Python. See fresh_ls/core/symbols.py for the capture convention.
; A decorated def/class is matched twice (bare and decorated); the extractor keeps the
; widest node per @name, so the decorators are part of the extent.

(function_definition
  name: (identifier) @name) @definition.function

(class_definition
  name: (identifier) @name) @definition.class

(decorated_definition
  definition: (function_definition
    name: (identifier) @name)) @definition.function

(decorated_definition
  definition: (class_definition
    name: (identifier) @name)) @definition.class

; f = lambda x: ...   (also annotated: f: Callable = lambda: ...)
(assignment
  left: (identifier) @name
  right: (lambda)) @definition.function
