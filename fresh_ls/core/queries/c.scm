; Definitions for C. See fresh_ls/core/symbols.py for the capture convention.
; Prototypes and bodiless `struct S;` are declarations, not definitions. Pointer return
; types wrap the function_declarator in pointer_declarators, so the shapes are spelled out
; (queries cannot match "any depth").

(function_definition
  declarator: [
    (function_declarator declarator: (identifier) @name)
    (pointer_declarator
      declarator: (function_declarator declarator: (identifier) @name))
    (pointer_declarator
      declarator: (pointer_declarator
        declarator: (function_declarator declarator: (identifier) @name)))
    (pointer_declarator
      declarator: (pointer_declarator
        declarator: (pointer_declarator
          declarator: (function_declarator declarator: (identifier) @name))))
    ; int (*f(void))(int): returns a function pointer
    (function_declarator
      declarator: (parenthesized_declarator
        (pointer_declarator
          declarator: (function_declarator declarator: (identifier) @name))))
  ]) @definition.function

(struct_specifier
  name: (type_identifier) @name
  body: (field_declaration_list)) @definition.struct

(union_specifier
  name: (type_identifier) @name
  body: (field_declaration_list)) @definition.union

(enum_specifier
  name: (type_identifier) @name
  body: (enumerator_list)) @definition.enum

; typedef struct { ... } T;  (anonymous body named by the typedef)
(type_definition
  type: (struct_specifier !name body: (field_declaration_list))
  declarator: (type_identifier) @name) @definition.struct

(type_definition
  type: (union_specifier !name body: (field_declaration_list))
  declarator: (type_identifier) @name) @definition.union

(type_definition
  type: (enum_specifier !name body: (enumerator_list))
  declarator: (type_identifier) @name) @definition.enum
