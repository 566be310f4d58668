// The record shapes the contact-data upstream returns (see /work/shared/upstreams.md, Contact-data).
import type { Seniority } from './wordlists.ts'

export const COMPANY_SIZES = ['1-10', '11-50', '51-200', '201-500', '501-1000', '1001-5000', '5001+'] as const
export type CompanySize = (typeof COMPANY_SIZES)[number]

export interface Location {
  city: string
  region: string
  country: string
}

export interface Email {
  address: string
  type: 'work' | 'personal'
  verified: boolean
}

export interface Phone {
  number: string
  type: 'mobile' | 'work'
}

export interface Person {
  id: string
  firstName: string
  lastName: string
  fullName: string
  emails: Email[]
  phones: Phone[]
  jobTitle: string
  seniority: Seniority
  company: { name: string; domain: string }
  location: Location
  socialProfiles: { linkedin: string | null; twitter: string | null; github: string | null }
}

export interface Company {
  id: string
  name: string
  domain: string
  size: CompanySize
  employeeCount: number
  industry: string
  location: Location
  revenue: { amount: number; currency: string; range: string }
  technologies: string[]
  socialProfiles: { linkedin: string | null; twitter: string | null }
  founded: number
}

/** What person search reveals: no email addresses or phone numbers, only whether they exist. */
export interface PersonSummary {
  id: string
  firstName: string
  lastName: string
  fullName: string
  jobTitle: string
  seniority: Seniority
  company: { name: string; domain: string }
  location: Location
  socialProfiles: Person['socialProfiles']
  hasEmail: boolean
  hasPhone: boolean
}

export function summarize(p: Person): PersonSummary {
  return {
    id: p.id,
    firstName: p.firstName,
    lastName: p.lastName,
    fullName: p.fullName,
    jobTitle: p.jobTitle,
    seniority: p.seniority,
    company: { ...p.company },
    location: { ...p.location },
    socialProfiles: { ...p.socialProfiles },
    hasEmail: p.emails.length > 0,
    hasPhone: p.phones.length > 0,
  }
}

/** Credits a matched person costs: a returned phone number doubles it. */
export function personCost(p: Person): number {
  return p.phones.length > 0 ? 2 : 1
}

const REVENUE_RANGES: readonly [number, string][] = [
  [1e6, '$0-$1M'],
  [1e7, '$1M-$10M'],
  [5e7, '$10M-$50M'],
  [1e8, '$50M-$100M'],
  [2.5e8, '$100M-$250M'],
  [5e8, '$250M-$500M'],
  [1e9, '$500M-$1B'],
  [1e10, '$1B-$10B'],
]

export function revenueRange(amount: number): string {
  for (const [below, label] of REVENUE_RANGES) if (amount < below) return label
  return '$10B+'
}

export function sizeFor(employeeCount: number): CompanySize {
  if (employeeCount <= 10) return '1-10'
  if (employeeCount <= 50) return '11-50'
  if (employeeCount <= 200) return '51-200'
  if (employeeCount <= 500) return '201-500'
  if (employeeCount <= 1000) return '501-1000'
  if (employeeCount <= 5000) return '1001-5000'
  return '5001+'
}
