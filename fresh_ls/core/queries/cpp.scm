; Definitions for C++. See fresh_ls/core/symbols.py for the capture convention.
; Prototypes, in-class method declarations and bodiless `class A;` are not definitions.
; Pointer/reference return types wrap the function_declarator, so the shapes are spelled
; out (queries cannot match "any depth"). A `template <...>` head is matched as a second,
; wider pattern; the extractor keeps the widest node per @name so the head is inside.

; Unqualified functions (free functions, and methods defined inside their class).
[
  (function_definition
    declarator: [
      (function_declarator
        declarator: [(identifier) (field_identifier) (destructor_name) (operator_name)] @name)
      (pointer_declarator
        declarator: (function_declarator
          declarator: [(identifier) (field_identifier) (operator_name)] @name))
      (reference_declarator
        (function_declarator
          declarator: [(identifier) (field_identifier) (operator_name)] @name))
    ])
  (template_declaration
    (function_definition
      declarator: [
        (function_declarator
          declarator: [(identifier) (field_identifier) (destructor_name) (operator_name)] @name)
        (pointer_declarator
          declarator: (function_declarator
            declarator: [(identifier) (field_identifier) (operator_name)] @name))
        (reference_declarator
          (function_declarator
            declarator: [(identifier) (field_identifier) (operator_name)] @name))
      ]))
] @definition.function

; Out-of-class definitions: int Cart::total() {} -> Cart.total; a::B::f -> a.B.f;
; template <class T> T Box<T>::get() {} -> Box.get.
[
  (function_definition
    declarator: [
      (function_declarator
        declarator: (qualified_identifier
          scope: [(namespace_identifier) @scope (template_type name: (_) @scope)]
          name: (_) @name))
      (pointer_declarator
        declarator: (function_declarator
          declarator: (qualified_identifier
            scope: [(namespace_identifier) @scope (template_type name: (_) @scope)]
            name: (_) @name)))
      (reference_declarator
        (function_declarator
          declarator: (qualified_identifier
            scope: [(namespace_identifier) @scope (template_type name: (_) @scope)]
            name: (_) @name)))
    ])
  (template_declaration
    (function_definition
      declarator: [
        (function_declarator
          declarator: (qualified_identifier
            scope: [(namespace_identifier) @scope (template_type name: (_) @scope)]
            name: (_) @name))
        (pointer_declarator
          declarator: (function_declarator
            declarator: (qualified_identifier
              scope: [(namespace_identifier) @scope (template_type name: (_) @scope)]
              name: (_) @name)))
        (reference_declarator
          (function_declarator
            declarator: (qualified_identifier
              scope: [(namespace_identifier) @scope (template_type name: (_) @scope)]
              name: (_) @name)))
      ]))
] @definition.method

[
  (class_specifier name: (_) @name body: (field_declaration_list))
  (template_declaration
    (class_specifier name: (_) @name body: (field_declaration_list)))
] @definition.class

[
  (struct_specifier name: (_) @name body: (field_declaration_list))
  (template_declaration
    (struct_specifier name: (_) @name body: (field_declaration_list)))
  (type_definition
    type: (struct_specifier !name body: (field_declaration_list))
    declarator: (type_identifier) @name)
] @definition.struct

[
  (union_specifier name: (_) @name body: (field_declaration_list))
  (template_declaration
    (union_specifier name: (_) @name body: (field_declaration_list)))
] @definition.union

(enum_specifier
  name: (_) @name
  body: (enumerator_list)) @definition.enum

; namespace a::b {} -> a.b; an anonymous namespace is not a definition.
(namespace_definition
  name: (_) @name
  body: (declaration_list)) @definition.namespace

; auto f = [](int x) {...};  With a single declarator the whole declaration is the extent.
(init_declarator
  declarator: (identifier) @name
  value: (lambda_expression)) @definition.function

(declaration
  type: (_)
  .
  declarator: (init_declarator
    declarator: (identifier) @name
    value: (lambda_expression))
  .) @definition.function

; std::function<void()> on_done = [] {...};  as a class member
(field_declaration
  declarator: (field_identifier) @name
  default_value: (lambda_expression)) @definition.function
