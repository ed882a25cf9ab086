// The package's declarations against the served OpenAPI document: .ci/node
// generates schema.d.ts from /__admin/openapi.json with openapi-typescript
// and compiles this file with tsc --strict. Each pair must be assignable
// both ways and have the same properties, required and optional alike, so
// that a schema change the declarations do not follow fails the build.
import type { components, operations } from "./schema.js";
import type {
  ApiError,
  CreateRequest,
  CreateResponse,
  Fault,
  FaultMatch,
  FaultSpec,
  JournalEntry,
  JournalResponse,
  RequestFilter,
  RequestorType,
  RequestorTypeInput,
  Resource,
  ResourcePage,
  SeedResource,
  StoredResource,
  StringOrList,
  UpdateRequest,
} from "resourcedir";

type S = components["schemas"];

type Assignable<A, B> = [A] extends [B] ? true : false;
type Mutual<A, B> = Assignable<A, B> extends true ? Assignable<B, A> : false;
type RequiredKeys<T> = { [K in keyof T]-?: {} extends Pick<T, K> ? never : K }[keyof T];
type Same<A, B> = Mutual<A, B> extends true
  ? Mutual<keyof A, keyof B> extends true
    ? Mutual<RequiredKeys<A>, RequiredKeys<B>>
    : false
  : false;

// A failure reads: Type 'false' does not satisfy the constraint 'true', on
// the line that names the pair.
type Check<T extends true> = T;

export type Checks = [
  Check<Same<Fault, S["Fault"]>>,
  Check<Same<FaultSpec, S["FaultSpec"]>>,
  Check<Same<FaultMatch, NonNullable<S["FaultSpec"]["Match"]>>>,
  Check<Same<FaultMatch, NonNullable<S["Fault"]["Match"]>>>,
  Check<Same<JournalEntry, S["JournalEntry"]>>,
  Check<Same<JournalResponse, NonNullable<S["JournalEntry"]["Response"]>>>,
  Check<Same<StringOrList, S["StringOrList"]>>,
  Check<Same<Resource, S["Resource"]>>,
  Check<Same<StoredResource, S["ResourceCreated"]>>,
  Check<Same<ResourcePage, S["ResourcePage"]>>,
  Check<Same<CreateResponse, S["CreateResponse"]>>,
  Check<Same<CreateRequest, S["CreateRequest"]>>,
  Check<Same<SeedResource, S["SeedResource"]>>,
  Check<Same<UpdateRequest, S["UpdateRequest"]>>,
  Check<Same<RequestorType, S["RequestorType"]>>,
  Check<Same<RequestorTypeInput, S["RequestorTypeInput"]>>,
  Check<Same<ApiError, S["Error"]>>,
  // What the controls answer, as the methods return it.
  Check<Same<Fault[], S["FaultList"]["Faults"]>>,
  Check<Same<JournalEntry[], S["Journal"]["Requests"]>>,
  Check<Same<StoredResource[], S["ResourceSet"]["Data"]>>,
  Check<Same<string[], S["SeedResponse"]["Ids"]>>,
  // requests() filters by the journal's query parameters, less the wait's.
  Check<Same<RequestFilter, Omit<NonNullable<operations["listRequests"]["parameters"]["query"]>, "count" | "wait">>>,
];
