// Demo data: what a directory looks like in a screenshot.
'use strict';

const people = [
  ['Ada', 'Lovelace', 'Analytical Engines', 'Mathematician', ['Employee']],
  ['Charles', 'Babbage', 'Analytical Engines', 'Founder', ['Employee', 'Team']],
  ['Grace', 'Hopper', 'Navy Computing', 'Rear Admiral', ['Contractor']],
  ['Alan', 'Turing', 'Bletchley Park', 'Cryptanalyst', ['Employee']],
  ['Katherine', 'Johnson', 'NASA Langley', 'Mathematician', ['Customer']],
  ['Edsger', 'Dijkstra', 'Eindhoven University', 'Professor', ['Contractor']],
  ['Barbara', 'Liskov', 'MIT', 'Professor', ['Customer']],
  ['Donald', 'Knuth', 'Stanford', 'Author', ['Customer', 'Contractor']],
  ['Margaret', 'Hamilton', 'Apollo Guidance', 'Director', ['Team']],
  ['Dennis', 'Ritchie', 'Bell Labs', 'Researcher', ['Employee']],
  ['Ken', 'Thompson', 'Bell Labs', 'Researcher', ['Employee']],
  ['Frances', 'Allen', 'IBM Research', 'Fellow', ['Customer']],
  ['John', 'Backus', 'IBM Research', 'Fellow', []],
  ['Radia', 'Perlman', 'DEC', 'Engineer', ['Contractor']],
  ['Tim', 'Berners-Lee', 'CERN', 'Scientist', ['Customer']],
  ['Hedy', 'Lamarr', null, 'Inventor', ['Contractor']],
  ['Claude', 'Shannon', 'Bell Labs', 'Mathematician', ['Employee']],
  ['Annie', 'Easley', 'NASA Lewis', 'Programmer', ['Employee']],
  ['Niklaus', 'Wirth', 'ETH Zürich', 'Professor', ['Customer']],
  ['Sophie', 'Wilson', 'Acorn Computers', 'Architect', ['Team', 'Employee']],
  ['Guido', 'van Rossum', 'CWI', 'Author', ['Contractor']],
  ['Anita', 'Borg', 'Xerox PARC', 'Researcher', ['Customer']],
  ['Leslie', 'Lamport', 'SRI', 'Researcher', ['Contractor']],
  [null, null, 'Analytical Engines', null, ['Company']],
  ['Émile', 'Zola', null, 'Novelist', []],
];

function demoResources() {
  return people.map(([first, last, company, position, types], i) => ({
    FirstName: first,
    Surname: last,
    Company: company,
    Position: position,
    Status: i % 6 === 5 ? 'Inactive' : 'Active',
    ExternalID: 'EMP-' + String(1001 + i),
    Email: first ? (first + '.' + last).toLowerCase().replace(/[^a-z.]/g, '') + '@example.org' : 'info@example.org',
    Types: types.map((Type) => ({ Type })),
  }));
}

module.exports = { demoResources };
