// Message table for gnostic's OpenAPI v2 protobuf form (package openapi.v2),
// the body of GET /openapi/v2 when a client accepts
// application/com.github.proto-openapi.spec.v2@v1.0+protobuf (client-go's
// OpenAPISchema, kubectl's validation, explain and apply).
// Field names, numbers and types are those of openapiv2/OpenAPIv2.proto in
// github.com/google/gnostic-models at commit a84a29ee8efac8d764f8dd251aa316fcaa61c60c
// (the schema kube-openapi's ToProtoBinary marshals), written in this
// project's table form (lib/protobuf/schema/types.ts: `name id type`, `[]` for
// repeated). The file is proto3; `ONEOFS` lists its `oneof oneof` groups.
import type { PackageSchema } from '../protobuf/schema/types.js';

export const openapiV2: PackageSchema = {
  alias: 'v2',
  protoPackage: 'openapi.v2',
  messages: {
    AdditionalPropertiesItem: ['schema 1 Schema', 'boolean 2 bool'],
    Any: ['value 1 google.protobuf.Any', 'yaml 2 string'],
    ApiKeySecurity: ['type 1 string', 'name 2 string', 'in 3 string', 'description 4 string', 'vendor_extension 5 []NamedAny'],
    BasicAuthenticationSecurity: ['type 1 string', 'description 2 string', 'vendor_extension 3 []NamedAny'],
    BodyParameter: ['description 1 string', 'name 2 string', 'in 3 string', 'required 4 bool', 'schema 5 Schema', 'vendor_extension 6 []NamedAny'],
    Contact: ['name 1 string', 'url 2 string', 'email 3 string', 'vendor_extension 4 []NamedAny'],
    Default: ['additional_properties 1 []NamedAny'],
    Definitions: ['additional_properties 1 []NamedSchema'],
    Document: ['swagger 1 string', 'info 2 Info', 'host 3 string', 'base_path 4 string', 'schemes 5 []string', 'consumes 6 []string', 'produces 7 []string', 'paths 8 Paths', 'definitions 9 Definitions', 'parameters 10 ParameterDefinitions', 'responses 11 ResponseDefinitions', 'security 12 []SecurityRequirement', 'security_definitions 13 SecurityDefinitions', 'tags 14 []Tag', 'external_docs 15 ExternalDocs', 'vendor_extension 16 []NamedAny'],
    Examples: ['additional_properties 1 []NamedAny'],
    ExternalDocs: ['description 1 string', 'url 2 string', 'vendor_extension 3 []NamedAny'],
    FileSchema: ['format 1 string', 'title 2 string', 'description 3 string', 'default 4 Any', 'required 5 []string', 'type 6 string', 'read_only 7 bool', 'external_docs 8 ExternalDocs', 'example 9 Any', 'vendor_extension 10 []NamedAny'],
    FormDataParameterSubSchema: ['required 1 bool', 'in 2 string', 'description 3 string', 'name 4 string', 'allow_empty_value 5 bool', 'type 6 string', 'format 7 string', 'items 8 PrimitivesItems', 'collection_format 9 string', 'default 10 Any', 'maximum 11 double', 'exclusive_maximum 12 bool', 'minimum 13 double', 'exclusive_minimum 14 bool', 'max_length 15 int64', 'min_length 16 int64', 'pattern 17 string', 'max_items 18 int64', 'min_items 19 int64', 'unique_items 20 bool', 'enum 21 []Any', 'multiple_of 22 double', 'vendor_extension 23 []NamedAny'],
    Header: ['type 1 string', 'format 2 string', 'items 3 PrimitivesItems', 'collection_format 4 string', 'default 5 Any', 'maximum 6 double', 'exclusive_maximum 7 bool', 'minimum 8 double', 'exclusive_minimum 9 bool', 'max_length 10 int64', 'min_length 11 int64', 'pattern 12 string', 'max_items 13 int64', 'min_items 14 int64', 'unique_items 15 bool', 'enum 16 []Any', 'multiple_of 17 double', 'description 18 string', 'vendor_extension 19 []NamedAny'],
    HeaderParameterSubSchema: ['required 1 bool', 'in 2 string', 'description 3 string', 'name 4 string', 'type 5 string', 'format 6 string', 'items 7 PrimitivesItems', 'collection_format 8 string', 'default 9 Any', 'maximum 10 double', 'exclusive_maximum 11 bool', 'minimum 12 double', 'exclusive_minimum 13 bool', 'max_length 14 int64', 'min_length 15 int64', 'pattern 16 string', 'max_items 17 int64', 'min_items 18 int64', 'unique_items 19 bool', 'enum 20 []Any', 'multiple_of 21 double', 'vendor_extension 22 []NamedAny'],
    Headers: ['additional_properties 1 []NamedHeader'],
    Info: ['title 1 string', 'version 2 string', 'description 3 string', 'terms_of_service 4 string', 'contact 5 Contact', 'license 6 License', 'vendor_extension 7 []NamedAny'],
    ItemsItem: ['schema 1 []Schema'],
    JsonReference: ['_ref 1 string', 'description 2 string'],
    License: ['name 1 string', 'url 2 string', 'vendor_extension 3 []NamedAny'],
    NamedAny: ['name 1 string', 'value 2 Any'],
    NamedHeader: ['name 1 string', 'value 2 Header'],
    NamedParameter: ['name 1 string', 'value 2 Parameter'],
    NamedPathItem: ['name 1 string', 'value 2 PathItem'],
    NamedResponse: ['name 1 string', 'value 2 Response'],
    NamedResponseValue: ['name 1 string', 'value 2 ResponseValue'],
    NamedSchema: ['name 1 string', 'value 2 Schema'],
    NamedSecurityDefinitionsItem: ['name 1 string', 'value 2 SecurityDefinitionsItem'],
    NamedString: ['name 1 string', 'value 2 string'],
    NamedStringArray: ['name 1 string', 'value 2 StringArray'],
    NonBodyParameter: ['header_parameter_sub_schema 1 HeaderParameterSubSchema', 'form_data_parameter_sub_schema 2 FormDataParameterSubSchema', 'query_parameter_sub_schema 3 QueryParameterSubSchema', 'path_parameter_sub_schema 4 PathParameterSubSchema'],
    Oauth2AccessCodeSecurity: ['type 1 string', 'flow 2 string', 'scopes 3 Oauth2Scopes', 'authorization_url 4 string', 'token_url 5 string', 'description 6 string', 'vendor_extension 7 []NamedAny'],
    Oauth2ApplicationSecurity: ['type 1 string', 'flow 2 string', 'scopes 3 Oauth2Scopes', 'token_url 4 string', 'description 5 string', 'vendor_extension 6 []NamedAny'],
    Oauth2ImplicitSecurity: ['type 1 string', 'flow 2 string', 'scopes 3 Oauth2Scopes', 'authorization_url 4 string', 'description 5 string', 'vendor_extension 6 []NamedAny'],
    Oauth2PasswordSecurity: ['type 1 string', 'flow 2 string', 'scopes 3 Oauth2Scopes', 'token_url 4 string', 'description 5 string', 'vendor_extension 6 []NamedAny'],
    Oauth2Scopes: ['additional_properties 1 []NamedString'],
    Operation: ['tags 1 []string', 'summary 2 string', 'description 3 string', 'external_docs 4 ExternalDocs', 'operation_id 5 string', 'produces 6 []string', 'consumes 7 []string', 'parameters 8 []ParametersItem', 'responses 9 Responses', 'schemes 10 []string', 'deprecated 11 bool', 'security 12 []SecurityRequirement', 'vendor_extension 13 []NamedAny'],
    Parameter: ['body_parameter 1 BodyParameter', 'non_body_parameter 2 NonBodyParameter'],
    ParameterDefinitions: ['additional_properties 1 []NamedParameter'],
    ParametersItem: ['parameter 1 Parameter', 'json_reference 2 JsonReference'],
    PathItem: ['_ref 1 string', 'get 2 Operation', 'put 3 Operation', 'post 4 Operation', 'delete 5 Operation', 'options 6 Operation', 'head 7 Operation', 'patch 8 Operation', 'parameters 9 []ParametersItem', 'vendor_extension 10 []NamedAny'],
    PathParameterSubSchema: ['required 1 bool', 'in 2 string', 'description 3 string', 'name 4 string', 'type 5 string', 'format 6 string', 'items 7 PrimitivesItems', 'collection_format 8 string', 'default 9 Any', 'maximum 10 double', 'exclusive_maximum 11 bool', 'minimum 12 double', 'exclusive_minimum 13 bool', 'max_length 14 int64', 'min_length 15 int64', 'pattern 16 string', 'max_items 17 int64', 'min_items 18 int64', 'unique_items 19 bool', 'enum 20 []Any', 'multiple_of 21 double', 'vendor_extension 22 []NamedAny'],
    Paths: ['vendor_extension 1 []NamedAny', 'path 2 []NamedPathItem'],
    PrimitivesItems: ['type 1 string', 'format 2 string', 'items 3 PrimitivesItems', 'collection_format 4 string', 'default 5 Any', 'maximum 6 double', 'exclusive_maximum 7 bool', 'minimum 8 double', 'exclusive_minimum 9 bool', 'max_length 10 int64', 'min_length 11 int64', 'pattern 12 string', 'max_items 13 int64', 'min_items 14 int64', 'unique_items 15 bool', 'enum 16 []Any', 'multiple_of 17 double', 'vendor_extension 18 []NamedAny'],
    Properties: ['additional_properties 1 []NamedSchema'],
    QueryParameterSubSchema: ['required 1 bool', 'in 2 string', 'description 3 string', 'name 4 string', 'allow_empty_value 5 bool', 'type 6 string', 'format 7 string', 'items 8 PrimitivesItems', 'collection_format 9 string', 'default 10 Any', 'maximum 11 double', 'exclusive_maximum 12 bool', 'minimum 13 double', 'exclusive_minimum 14 bool', 'max_length 15 int64', 'min_length 16 int64', 'pattern 17 string', 'max_items 18 int64', 'min_items 19 int64', 'unique_items 20 bool', 'enum 21 []Any', 'multiple_of 22 double', 'vendor_extension 23 []NamedAny'],
    Response: ['description 1 string', 'schema 2 SchemaItem', 'headers 3 Headers', 'examples 4 Examples', 'vendor_extension 5 []NamedAny'],
    ResponseDefinitions: ['additional_properties 1 []NamedResponse'],
    ResponseValue: ['response 1 Response', 'json_reference 2 JsonReference'],
    Responses: ['response_code 1 []NamedResponseValue', 'vendor_extension 2 []NamedAny'],
    Schema: ['_ref 1 string', 'format 2 string', 'title 3 string', 'description 4 string', 'default 5 Any', 'multiple_of 6 double', 'maximum 7 double', 'exclusive_maximum 8 bool', 'minimum 9 double', 'exclusive_minimum 10 bool', 'max_length 11 int64', 'min_length 12 int64', 'pattern 13 string', 'max_items 14 int64', 'min_items 15 int64', 'unique_items 16 bool', 'max_properties 17 int64', 'min_properties 18 int64', 'required 19 []string', 'enum 20 []Any', 'additional_properties 21 AdditionalPropertiesItem', 'type 22 TypeItem', 'items 23 ItemsItem', 'all_of 24 []Schema', 'properties 25 Properties', 'discriminator 26 string', 'read_only 27 bool', 'xml 28 Xml', 'external_docs 29 ExternalDocs', 'example 30 Any', 'vendor_extension 31 []NamedAny'],
    SchemaItem: ['schema 1 Schema', 'file_schema 2 FileSchema'],
    SecurityDefinitions: ['additional_properties 1 []NamedSecurityDefinitionsItem'],
    SecurityDefinitionsItem: ['basic_authentication_security 1 BasicAuthenticationSecurity', 'api_key_security 2 ApiKeySecurity', 'oauth2_implicit_security 3 Oauth2ImplicitSecurity', 'oauth2_password_security 4 Oauth2PasswordSecurity', 'oauth2_application_security 5 Oauth2ApplicationSecurity', 'oauth2_access_code_security 6 Oauth2AccessCodeSecurity'],
    SecurityRequirement: ['additional_properties 1 []NamedStringArray'],
    StringArray: ['value 1 []string'],
    Tag: ['name 1 string', 'description 2 string', 'external_docs 3 ExternalDocs', 'vendor_extension 4 []NamedAny'],
    TypeItem: ['value 1 []string'],
    VendorExtension: ['additional_properties 1 []NamedAny'],
    Xml: ['name 1 string', 'namespace 2 string', 'prefix 3 string', 'attribute 4 bool', 'wrapped 5 bool', 'vendor_extension 6 []NamedAny'],
  },
};

/** Messages whose fields all belong to one `oneof oneof` (every such message in the file). */
export const ONEOFS: readonly string[] = [
  'AdditionalPropertiesItem',
  'NonBodyParameter',
  'Parameter',
  'ParametersItem',
  'ResponseValue',
  'SchemaItem',
  'SecurityDefinitionsItem',
];

/** google.protobuf.Any, the type of `Any.value` (gnostic's parser never fills it: it writes `Any.yaml`). */
export const PROTOBUF_ANY_FIELDS: readonly string[] = ['type_url 1 string', 'value 2 bytes'];
