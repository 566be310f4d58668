// Word lists for the generated dataset. Names are combined at random, so no record describes a real
// person; company names are invented compounds.

// biome-ignore format: a word list reads better packed
export const FIRST_NAMES = [
  'Aaliyah', 'Aarav', 'Abigail', 'Adaeze', 'Adrian', 'Aisha', 'Alejandro', 'Alexis', 'Amara', 'Amelia',
  'Ana', 'Andre', 'Anika', 'Arjun', 'Astrid', 'Ava', 'Benjamin', 'Bianca', 'Bram', 'Caleb',
  'Camila', 'Carmen', 'Chen', 'Chloe', 'Connor', 'Dalia', 'Daniel', 'Darius', 'Diego', 'Dmitri',
  'Eitan', 'Elena', 'Elif', 'Elijah', 'Emeka', 'Emma', 'Ethan', 'Fatima', 'Felix', 'Freya',
  'Gabriel', 'Grace', 'Hana', 'Hannah', 'Hiro', 'Ibrahim', 'Imani', 'Ines', 'Isaac', 'Isabella',
  'Ivan', 'Jamal', 'Javier', 'Jia', 'Jonas', 'Julia', 'Kai', 'Kalani', 'Karin', 'Kenji',
  'Keisha', 'Kwame', 'Lars', 'Layla', 'Leila', 'Leon', 'Liam', 'Lina', 'Lucas', 'Lucia',
  'Luis', 'Maeve', 'Malik', 'Mara', 'Marco', 'Mariana', 'Mateo', 'Maya', 'Mei', 'Mila',
  'Mohammed', 'Nadia', 'Naomi', 'Nathan', 'Nia', 'Nikhil', 'Nina', 'Noah', 'Nora', 'Olivia',
  'Omar', 'Oscar', 'Priya', 'Rafael', 'Rahul', 'Ravi', 'Renata', 'Rhys', 'Rosa', 'Ruth',
  'Sakura', 'Samir', 'Samuel', 'Sanjay', 'Sara', 'Sebastian', 'Seo-yeon', 'Shira', 'Simone', 'Sofia',
  'Soren', 'Tariq', 'Tessa', 'Theo', 'Tomas', 'Uma', 'Valentina', 'Victor', 'Wei', 'Wen',
  'Xavier', 'Yara', 'Yusuf', 'Zainab', 'Zara', 'Zoe',
] as const

// biome-ignore format: a word list reads better packed
export const LAST_NAMES = [
  'Abara', 'Acosta', 'Adeyemi', 'Ahlberg', 'Alvarez', 'Amsel', 'Andersen', 'Arslan', 'Bakshi', 'Balogun',
  'Barros', 'Becker', 'Bergstrom', 'Bhatt', 'Blackwood', 'Brandt', 'Calloway', 'Castellanos', 'Chandra', 'Chowdhury',
  'Cruz', 'Dahl', 'Delacroix', 'Demir', 'Desai', 'Dietrich', 'Donnelly', 'Dubois', 'Ekwueme', 'Eriksen',
  'Espinoza', 'Farouk', 'Fernandes', 'Fitzgerald', 'Fonseca', 'Fujimoto', 'Galloway', 'Garrido', 'Gatti', 'Grieve',
  'Haddad', 'Halvorsen', 'Hartmann', 'Hayashi', 'Hollis', 'Iwu', 'Jaramillo', 'Jensen', 'Kaplan', 'Kariuki',
  'Kaur', 'Kessler', 'Khoury', 'Kim', 'Kowalczyk', 'Krishnan', 'Lachance', 'Lindqvist', 'Lombardi', 'Lungu',
  'Mahlangu', 'Marchetti', 'Marsh', 'Mendoza', 'Mensah', 'Moreau', 'Murakami', 'Nakashima', 'Navarro', 'Ndiaye',
  'Nguyen', 'Novak', 'Nwosu', 'Obi', 'Okafor', 'Oliveira', 'Orozco', 'Ostrowski', 'Pacheco', 'Park',
  'Petrov', 'Pham', 'Quintero', 'Rahman', 'Ramaswamy', 'Reyes', 'Richter', 'Rinaldi', 'Rossi', 'Sabry',
  'Salazar', 'Sandoval', 'Schreiber', 'Sato', 'Serrano', 'Shah', 'Sokolov', 'Strand', 'Suzuki', 'Takahashi',
  'Tanaka', 'Thorne', 'Toussaint', 'Valdez', 'Vance', 'Varga', 'Vasquez', 'Verhoeven', 'Voss', 'Wainwright',
  'Watanabe', 'Weber', 'Whitlock', 'Wojcik', 'Xu', 'Yamamoto', 'Yilmaz', 'Zhang', 'Zielinski', 'Zuniga',
] as const

// biome-ignore format: a word list reads better packed
export const NAME_STEMS = [
  'Amber', 'Anvil', 'Apex', 'Arbor', 'Aster', 'Atlas', 'Aurora', 'Basalt', 'Beacon', 'Birch',
  'Bluefin', 'Bramble', 'Brightwater', 'Cairn', 'Canopy', 'Cedar', 'Cinder', 'Clearpath', 'Cobalt', 'Copper',
  'Coral', 'Crescent', 'Driftwood', 'Ember', 'Evergreen', 'Falcon', 'Fathom', 'Fernhill', 'Fjord', 'Flint',
  'Foxglove', 'Glacier', 'Granite', 'Greystone', 'Halcyon', 'Harbor', 'Hawthorn', 'Heron', 'Highland', 'Ironwood',
  'Juniper', 'Keystone', 'Kestrel', 'Lantern', 'Larkspur', 'Lighthouse', 'Lumen', 'Maple', 'Meridian', 'Mesa',
  'Monarch', 'Nimbus', 'Northstar', 'Oakridge', 'Obsidian', 'Orchard', 'Osprey', 'Pinnacle', 'Prairie', 'Quarry',
  'Quill', 'Redwood', 'Ridgeline', 'Riverbend', 'Saffron', 'Sagebrush', 'Sandstone', 'Sequoia', 'Silverline', 'Skylark',
  'Solstice', 'Sparrow', 'Summit', 'Tamarack', 'Tidewater', 'Timber', 'Trillium', 'Tundra', 'Vantage', 'Verdant',
  'Vireo', 'Wavecrest', 'Willow', 'Windward', 'Zephyr',
] as const

export interface IndustryProfile {
  name: string
  suffixes: readonly string[]
  technologies: readonly string[]
  /** Typical revenue per employee in USD, so revenue stays plausible for the size. */
  revenuePerEmployee: number
}

// biome-ignore format: a word list reads better packed
export const INDUSTRIES: readonly IndustryProfile[] = [
  { name: 'Software', suffixes: ['Software', 'Labs', 'Systems', 'Cloud'], technologies: ['AWS', 'Kubernetes', 'PostgreSQL', 'React', 'Datadog', 'GitHub', 'Jira', 'Segment'], revenuePerEmployee: 220_000 },
  { name: 'Data & Analytics', suffixes: ['Analytics', 'Data', 'Insights', 'Metrics'], technologies: ['Snowflake', 'dbt', 'Looker', 'Google Cloud', 'Python', 'Airflow', 'Tableau'], revenuePerEmployee: 240_000 },
  { name: 'Cybersecurity', suffixes: ['Security', 'Shield', 'Defense', 'Secure'], technologies: ['Okta', 'CrowdStrike', 'Splunk', 'AWS', 'Terraform', 'Go'], revenuePerEmployee: 260_000 },
  { name: 'Financial Services', suffixes: ['Capital', 'Financial', 'Partners', 'Advisors'], technologies: ['Salesforce', 'Bloomberg Terminal', 'Microsoft 365', 'Stripe', 'Plaid', 'Oracle'], revenuePerEmployee: 380_000 },
  { name: 'Insurance', suffixes: ['Insurance', 'Assurance', 'Mutual'], technologies: ['Guidewire', 'Salesforce', 'Microsoft 365', 'Azure', 'Duck Creek'], revenuePerEmployee: 420_000 },
  { name: 'Healthcare', suffixes: ['Health', 'Medical', 'Care', 'Clinics'], technologies: ['Epic', 'Athenahealth', 'Microsoft 365', 'Azure', 'Zoom'], revenuePerEmployee: 150_000 },
  { name: 'Biotechnology', suffixes: ['Bio', 'Therapeutics', 'Genomics', 'Biosciences'], technologies: ['Benchling', 'AWS', 'Python', 'Veeva', 'Slack'], revenuePerEmployee: 300_000 },
  { name: 'Manufacturing', suffixes: ['Manufacturing', 'Industries', 'Fabrication', 'Works'], technologies: ['SAP', 'Siemens Opcenter', 'Microsoft Dynamics', 'AutoCAD', 'Oracle'], revenuePerEmployee: 260_000 },
  { name: 'Automotive', suffixes: ['Motors', 'Automotive', 'Mobility'], technologies: ['SAP', 'Siemens NX', 'MATLAB', 'Azure', 'Salesforce'], revenuePerEmployee: 320_000 },
  { name: 'Logistics', suffixes: ['Logistics', 'Freight', 'Shipping', 'Transport'], technologies: ['Oracle', 'SAP', 'Samsara', 'Project44', 'Microsoft 365'], revenuePerEmployee: 210_000 },
  { name: 'Retail', suffixes: ['Goods', 'Outfitters', 'Market', 'Supply'], technologies: ['Shopify', 'Klaviyo', 'Stripe', 'Google Analytics', 'Zendesk', 'NetSuite'], revenuePerEmployee: 180_000 },
  { name: 'Hospitality', suffixes: ['Hospitality', 'Hotels', 'Resorts', 'Kitchens'], technologies: ['Oracle Opera', 'Toast', 'Mailchimp', 'Google Workspace'], revenuePerEmployee: 90_000 },
  { name: 'Marketing & Advertising', suffixes: ['Media', 'Creative', 'Agency', 'Studio'], technologies: ['HubSpot', 'Google Ads', 'Figma', 'Marketo', 'Hootsuite', 'Adobe Creative Cloud'], revenuePerEmployee: 160_000 },
  { name: 'Education', suffixes: ['Learning', 'Academy', 'Education', 'Institute'], technologies: ['Canvas', 'Google Workspace', 'Zoom', 'Blackboard', 'Salesforce'], revenuePerEmployee: 110_000 },
  { name: 'Real Estate', suffixes: ['Properties', 'Realty', 'Estates', 'Development'], technologies: ['Yardi', 'AppFolio', 'Salesforce', 'DocuSign', 'Microsoft 365'], revenuePerEmployee: 280_000 },
  { name: 'Construction', suffixes: ['Construction', 'Builders', 'Engineering', 'Contractors'], technologies: ['Procore', 'Autodesk BIM 360', 'AutoCAD', 'Microsoft 365'], revenuePerEmployee: 230_000 },
  { name: 'Energy', suffixes: ['Energy', 'Power', 'Renewables', 'Solar'], technologies: ['SAP', 'OSIsoft PI', 'ArcGIS', 'Azure', 'Salesforce'], revenuePerEmployee: 450_000 },
  { name: 'Telecommunications', suffixes: ['Networks', 'Telecom', 'Communications', 'Wireless'], technologies: ['Cisco', 'Juniper', 'ServiceNow', 'Salesforce', 'Oracle'], revenuePerEmployee: 350_000 },
  { name: 'Legal Services', suffixes: ['Legal', 'Law Group', 'Counsel'], technologies: ['Clio', 'NetDocuments', 'DocuSign', 'Microsoft 365'], revenuePerEmployee: 200_000 },
  { name: 'Consulting', suffixes: ['Consulting', 'Advisory', 'Group', 'Strategies'], technologies: ['Salesforce', 'Microsoft 365', 'Slack', 'Tableau', 'Asana'], revenuePerEmployee: 190_000 },
]

/** Tools nearly every kind of company uses; mixed into each company's stack. */
// biome-ignore format: a word list reads better packed
export const COMMON_TECHNOLOGIES = [
  'Google Workspace', 'Microsoft 365', 'Slack', 'Zoom', 'Salesforce', 'HubSpot', 'Zendesk', 'Intercom',
  'Okta', 'Atlassian Confluence', 'Jira', 'Notion', 'Gong', 'Outreach', 'DocuSign', 'Workday', 'Greenhouse',
  'Cloudflare', 'WordPress', 'Google Analytics',
] as const

export interface Place {
  city: string
  region: string
  country: string
  /** Country calling code and an area code, for phone numbers. */
  dial: string
  area: string
}

// biome-ignore format: a word list reads better packed
export const PLACES: readonly Place[] = [
  { city: 'San Francisco', region: 'California', country: 'United States', dial: '1', area: '415' },
  { city: 'Los Angeles', region: 'California', country: 'United States', dial: '1', area: '213' },
  { city: 'San Diego', region: 'California', country: 'United States', dial: '1', area: '619' },
  { city: 'Seattle', region: 'Washington', country: 'United States', dial: '1', area: '206' },
  { city: 'Austin', region: 'Texas', country: 'United States', dial: '1', area: '512' },
  { city: 'Dallas', region: 'Texas', country: 'United States', dial: '1', area: '214' },
  { city: 'New York', region: 'New York', country: 'United States', dial: '1', area: '212' },
  { city: 'Boston', region: 'Massachusetts', country: 'United States', dial: '1', area: '617' },
  { city: 'Chicago', region: 'Illinois', country: 'United States', dial: '1', area: '312' },
  { city: 'Denver', region: 'Colorado', country: 'United States', dial: '1', area: '303' },
  { city: 'Atlanta', region: 'Georgia', country: 'United States', dial: '1', area: '404' },
  { city: 'Miami', region: 'Florida', country: 'United States', dial: '1', area: '305' },
  { city: 'Raleigh', region: 'North Carolina', country: 'United States', dial: '1', area: '919' },
  { city: 'Salt Lake City', region: 'Utah', country: 'United States', dial: '1', area: '801' },
  { city: 'Toronto', region: 'Ontario', country: 'Canada', dial: '1', area: '416' },
  { city: 'Vancouver', region: 'British Columbia', country: 'Canada', dial: '1', area: '604' },
  { city: 'Montreal', region: 'Quebec', country: 'Canada', dial: '1', area: '514' },
  { city: 'London', region: 'England', country: 'United Kingdom', dial: '44', area: '20' },
  { city: 'Manchester', region: 'England', country: 'United Kingdom', dial: '44', area: '161' },
  { city: 'Edinburgh', region: 'Scotland', country: 'United Kingdom', dial: '44', area: '131' },
  { city: 'Dublin', region: 'Leinster', country: 'Ireland', dial: '353', area: '1' },
  { city: 'Berlin', region: 'Berlin', country: 'Germany', dial: '49', area: '30' },
  { city: 'Munich', region: 'Bavaria', country: 'Germany', dial: '49', area: '89' },
  { city: 'Hamburg', region: 'Hamburg', country: 'Germany', dial: '49', area: '40' },
  { city: 'Paris', region: 'Ile-de-France', country: 'France', dial: '33', area: '1' },
  { city: 'Lyon', region: 'Auvergne-Rhone-Alpes', country: 'France', dial: '33', area: '4' },
  { city: 'Amsterdam', region: 'North Holland', country: 'Netherlands', dial: '31', area: '20' },
  { city: 'Stockholm', region: 'Stockholm County', country: 'Sweden', dial: '46', area: '8' },
  { city: 'Copenhagen', region: 'Capital Region', country: 'Denmark', dial: '45', area: '3' },
  { city: 'Madrid', region: 'Community of Madrid', country: 'Spain', dial: '34', area: '91' },
  { city: 'Barcelona', region: 'Catalonia', country: 'Spain', dial: '34', area: '93' },
  { city: 'Zurich', region: 'Zurich', country: 'Switzerland', dial: '41', area: '44' },
  { city: 'Sydney', region: 'New South Wales', country: 'Australia', dial: '61', area: '2' },
  { city: 'Melbourne', region: 'Victoria', country: 'Australia', dial: '61', area: '3' },
  { city: 'Singapore', region: 'Singapore', country: 'Singapore', dial: '65', area: '6' },
  { city: 'Bangalore', region: 'Karnataka', country: 'India', dial: '91', area: '80' },
  { city: 'Tokyo', region: 'Tokyo', country: 'Japan', dial: '81', area: '3' },
  { city: 'Sao Paulo', region: 'Sao Paulo', country: 'Brazil', dial: '55', area: '11' },
  { city: 'Mexico City', region: 'Mexico City', country: 'Mexico', dial: '52', area: '55' },
  { city: 'Tel Aviv', region: 'Tel Aviv District', country: 'Israel', dial: '972', area: '3' },
  { city: 'Lagos', region: 'Lagos', country: 'Nigeria', dial: '234', area: '1' },
  { city: 'Nairobi', region: 'Nairobi County', country: 'Kenya', dial: '254', area: '20' },
]

export const SENIORITIES = ['entry', 'senior', 'manager', 'director', 'vp', 'c_suite'] as const
export type Seniority = (typeof SENIORITIES)[number]

/** Job titles by department and seniority, so a title always agrees with its seniority. */
export const DEPARTMENTS: readonly { name: string; titles: Record<Seniority, readonly string[]> }[] = [
  {
    name: 'Sales',
    titles: {
      entry: ['Sales Development Representative', 'Business Development Representative'],
      senior: ['Account Executive', 'Senior Account Executive', 'Enterprise Account Executive'],
      manager: ['Sales Manager', 'Regional Sales Manager'],
      director: ['Director of Sales', 'Director of Business Development'],
      vp: ['VP of Sales', 'VP of Business Development'],
      c_suite: ['Chief Revenue Officer'],
    },
  },
  {
    name: 'Marketing',
    titles: {
      entry: ['Marketing Coordinator', 'Marketing Associate'],
      senior: ['Senior Marketing Specialist', 'Content Marketing Lead', 'Demand Generation Specialist'],
      manager: ['Marketing Manager', 'Product Marketing Manager'],
      director: ['Director of Marketing', 'Director of Demand Generation'],
      vp: ['VP of Marketing'],
      c_suite: ['Chief Marketing Officer'],
    },
  },
  {
    name: 'Engineering',
    titles: {
      entry: ['Software Engineer', 'Junior Developer'],
      senior: ['Senior Software Engineer', 'Staff Engineer', 'Site Reliability Engineer'],
      manager: ['Engineering Manager'],
      director: ['Director of Engineering'],
      vp: ['VP of Engineering'],
      c_suite: ['Chief Technology Officer'],
    },
  },
  {
    name: 'Product',
    titles: {
      entry: ['Associate Product Manager'],
      senior: ['Product Manager', 'Senior Product Manager', 'Senior Product Designer'],
      manager: ['Group Product Manager'],
      director: ['Director of Product'],
      vp: ['VP of Product'],
      c_suite: ['Chief Product Officer'],
    },
  },
  {
    name: 'Finance',
    titles: {
      entry: ['Financial Analyst', 'Accountant'],
      senior: ['Senior Financial Analyst', 'Senior Accountant'],
      manager: ['Finance Manager', 'Controller'],
      director: ['Director of Finance'],
      vp: ['VP of Finance'],
      c_suite: ['Chief Financial Officer'],
    },
  },
  {
    name: 'Operations',
    titles: {
      entry: ['Operations Associate'],
      senior: ['Senior Operations Analyst', 'Revenue Operations Specialist'],
      manager: ['Operations Manager'],
      director: ['Director of Operations'],
      vp: ['VP of Operations'],
      c_suite: ['Chief Operating Officer'],
    },
  },
  {
    name: 'People',
    titles: {
      entry: ['Recruiting Coordinator', 'People Operations Associate'],
      senior: ['Senior Recruiter', 'HR Business Partner'],
      manager: ['Talent Acquisition Manager', 'HR Manager'],
      director: ['Director of People'],
      vp: ['VP of People'],
      c_suite: ['Chief People Officer'],
    },
  },
  {
    name: 'Customer Success',
    titles: {
      entry: ['Customer Success Associate', 'Support Specialist'],
      senior: ['Customer Success Manager', 'Senior Support Engineer'],
      manager: ['Customer Success Team Lead', 'Support Manager'],
      director: ['Director of Customer Success'],
      vp: ['VP of Customer Success'],
      c_suite: ['Chief Customer Officer'],
    },
  },
  {
    name: 'IT',
    titles: {
      entry: ['IT Support Specialist'],
      senior: ['Systems Administrator', 'Senior IT Engineer'],
      manager: ['IT Manager'],
      director: ['Director of IT'],
      vp: ['VP of Information Technology'],
      c_suite: ['Chief Information Officer'],
    },
  },
  {
    name: 'Legal',
    titles: {
      entry: ['Paralegal', 'Legal Assistant'],
      senior: ['Corporate Counsel', 'Senior Counsel'],
      manager: ['Legal Operations Manager'],
      director: ['Director of Legal'],
      vp: ['VP of Legal'],
      c_suite: ['General Counsel'],
    },
  },
]

export const PERSONAL_EMAIL_DOMAINS = [
  'gmail.com',
  'outlook.com',
  'yahoo.com',
  'icloud.com',
  'proton.me',
] as const
export const COMPANY_TLDS = ['com', 'com', 'com', 'io', 'co', 'net', 'ai'] as const
