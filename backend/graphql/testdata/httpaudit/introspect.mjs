// Loads the schema of AGENTDESK_URL/graphql as today's tools do: graphql-js's
// introspection query with every option of the current spec, then buildClientSchema.
// Prints the number of types, or fails.
import { buildClientSchema, getIntrospectionQuery } from 'graphql';

const query = getIntrospectionQuery({
  descriptions: true,
  specifiedByUrl: true,
  directiveIsRepeatable: true,
  schemaDescription: true,
  inputValueDeprecation: true,
  oneOf: true,
});
const res = await fetch(process.env.AGENTDESK_URL + '/graphql', {
  method: 'POST',
  headers: { 'Content-Type': 'application/json', Authorization: 'Bearer ' + process.env.AGENTDESK_TOKEN },
  body: JSON.stringify({ query }),
});
const body = await res.json();
if (res.status !== 200 || body.errors) {
  console.error(res.status, JSON.stringify(body.errors));
  process.exit(1);
}
const schema = buildClientSchema(body.data);
console.log(JSON.stringify({ types: Object.keys(schema.getTypeMap()).length }));
