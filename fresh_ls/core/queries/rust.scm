; Definitions for Rust. See fresh_ls/core/symbols.py for the capture convention.
; An impl block is named by the implemented type (not the trait), so methods inside read
; as Cart.total for both `impl Cart` and `impl Display for Cart`.

(function_item
  name: (identifier) @name) @definition.function

(struct_item
  name: (type_identifier) @name) @definition.struct

(enum_item
  name: (type_identifier) @name) @definition.enum

(union_item
  name: (type_identifier) @name) @definition.union

(trait_item
  name: (type_identifier) @name) @definition.trait

; `mod m;` only names a file; just the inline module has a body.
(mod_item
  name: (identifier) @name
  body: (declaration_list)) @definition.module

(impl_item
  type: [
    (type_identifier) @name
    (generic_type type: (type_identifier) @name)
    (scoped_type_identifier name: (type_identifier) @name)
    (generic_type type: (scoped_type_identifier name: (type_identifier) @name))
    (reference_type type: (type_identifier) @name)
    (reference_type type: (generic_type type: (type_identifier) @name))
  ]) @definition.impl

; let f = |x| ...; static/const F: fn() = || ...;
(let_declaration
  pattern: (identifier) @name
  value: (closure_expression)) @definition.function

[
  (const_item name: (identifier) @name value: (closure_expression))
  (static_item name: (identifier) @name value: (closure_expression))
] @definition.function
